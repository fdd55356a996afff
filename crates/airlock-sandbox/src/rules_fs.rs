//! The Landlock half of the confinement: which trees the command may read or write, which TCP
//! port it may connect to (the proxy's), and (ABI 6+) no signals or abstract UNIX sockets
//! outside its own domain. Landlock is an allow-list: everything not named is denied.

use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, LandlockStatus, NetPort,
    PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetError, RulesetStatus,
    Scope,
};

use crate::{Plan, SandboxError};

/// The newest ABI this code was written and tested against (this crate's kernel has 7).
const TARGET: ABI = ABI::V7;

fn unavailable(e: RulesetError) -> SandboxError {
    SandboxError::Unavailable(e.to_string())
}

/// Restricts the calling process (and everything it will exec) as `plan` says. Returns a
/// one-line account of what the kernel enforces.
pub fn apply(plan: &Plan) -> Result<String, SandboxError> {
    if plan.assume_no_landlock {
        return Err(SandboxError::Unavailable(
            "Landlock is treated as missing (assume_no_landlock), so the command is refused".into(),
        ));
    }
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(TARGET))
        .map_err(unavailable)?;
    // A run with network must have the kernel hold the command to the proxy's port; without
    // network, seccomp already refuses IP sockets, and Landlock adds what it can.
    let net_level = if plan.proxy_port.is_some() {
        CompatLevel::HardRequirement
    } else {
        CompatLevel::BestEffort
    };
    ruleset = ruleset
        .set_compatibility(net_level)
        .handle_access(AccessNet::from_all(TARGET))
        .map_err(|e| match plan.proxy_port {
            Some(_) => SandboxError::Unavailable(format!(
                "network was granted but the kernel cannot restrict TCP ports (Landlock ABI 4 or later is needed): {e}"
            )),
            None => unavailable(e),
        })?
        .set_compatibility(CompatLevel::BestEffort)
        .scope(Scope::from_all(TARGET))
        .map_err(unavailable)?;
    let mut created = ruleset.create().map_err(unavailable)?;
    let all = AccessFs::from_all(TARGET);
    let read = AccessFs::from_read(TARGET);
    let file = AccessFs::from_file(TARGET);
    for p in &plan.read {
        created = add_path(created, p, read, file)?;
    }
    for p in &plan.write {
        created = add_path(created, p, all, file)?;
    }
    for p in &plan.write_files {
        created = add_path(created, p, file, file)?;
    }
    if let Some(port) = plan.proxy_port {
        created = created
            .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
            .map_err(unavailable)?;
    }
    let status = created.restrict_self().map_err(unavailable)?;
    let abi = match status.landlock {
        LandlockStatus::Available { effective_abi, .. } => effective_abi,
        LandlockStatus::NotEnabled => {
            return Err(SandboxError::Unavailable(
                "Landlock is built into the kernel but not enabled (add it to the lsm= boot parameter)".into(),
            ));
        }
        LandlockStatus::NotImplemented => {
            return Err(SandboxError::Unavailable(
                "the kernel has no Landlock (Linux 5.13 or later with CONFIG_SECURITY_LANDLOCK is needed)".into(),
            ));
        }
    };
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(SandboxError::Unavailable(
            "the kernel did not enforce the Landlock ruleset".into(),
        ));
    }
    Ok(format!(
        "landlock ABI {} ({})",
        abi as i32,
        match status.ruleset {
            RulesetStatus::FullyEnforced => "fully enforced",
            _ => "partially enforced: an older kernel",
        }
    ))
}

/// Adds one tree (or one file, with the file rights only: a directory right on a file is an
/// error). The path is opened once, and its kind read from the open descriptor; a path that
/// does not exist (the supervisor already left out those it found missing) is skipped: it
/// cannot be opened anyway.
fn add_path(
    created: landlock::RulesetCreated,
    path: &Path,
    dir_rights: BitFlags<AccessFs>,
    file_rights: BitFlags<AccessFs>,
) -> Result<landlock::RulesetCreated, SandboxError> {
    let fd = match PathFd::new(path) {
        Ok(fd) => fd,
        Err(_) if std::fs::symlink_metadata(path).is_err() => return Ok(created),
        Err(e) => {
            return Err(SandboxError::Invalid(format!(
                "opening {}: {e}",
                path.display()
            )));
        }
    };
    let stat = rustix::fs::fstat(&fd)
        .map_err(|e| SandboxError::setup(format!("reading {}", path.display()), e))?;
    let is_dir =
        rustix::fs::FileType::from_raw_mode(stat.st_mode) == rustix::fs::FileType::Directory;
    let rights = if is_dir {
        dir_rights
    } else {
        dir_rights & file_rights
    };
    created
        .add_rule(PathBeneath::new(fd, rights))
        .map_err(unavailable)
}
