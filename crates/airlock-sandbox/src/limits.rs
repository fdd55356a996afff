//! Resource limits of the confined command: soft and hard set to the same value, so the command
//! cannot raise them again.

use rustix::process::{Resource, Rlimit, setrlimit};

use crate::{Limits, SandboxError};

pub fn apply(l: &Limits) -> Result<(), SandboxError> {
    let set = |r: Resource, name: &str, v: Option<u64>| -> Result<(), SandboxError> {
        match v {
            None => Ok(()),
            Some(v) => setrlimit(
                r,
                Rlimit {
                    current: Some(v),
                    maximum: Some(v),
                },
            )
            .map_err(|e| SandboxError::setup(format!("setting {name} to {v}"), e)),
        }
    };
    set(Resource::Cpu, "RLIMIT_CPU", l.cpu_secs)?;
    set(Resource::As, "RLIMIT_AS", l.address_space)?;
    set(Resource::Fsize, "RLIMIT_FSIZE", l.file_size)?;
    set(Resource::Nproc, "RLIMIT_NPROC", l.processes)?;
    Ok(())
}
