//! The resolved confinement of one run, handed from the supervisor to the launcher as JSON.
//! Everything in it is already decided (paths absolute and existing, grants checked): the
//! launcher only applies it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Resource limits (`None`: leave the inherited limit).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// RLIMIT_CPU, seconds of CPU time.
    pub cpu_secs: Option<u64>,
    /// RLIMIT_AS, bytes of address space.
    pub address_space: Option<u64>,
    /// RLIMIT_FSIZE, the largest file the command may write, in bytes.
    pub file_size: Option<u64>,
    /// RLIMIT_NPROC (per user; root ignores it, hence the pids cgroup) and the cgroup's
    /// pids.max.
    pub processes: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The command and its arguments (`argv[0]` is looked up in PATH).
    pub argv: Vec<String>,
    /// Trees the command may read and execute.
    pub read: Vec<PathBuf>,
    /// Trees the command may read, write, create in and delete in.
    pub write: Vec<PathBuf>,
    /// Single files (devices such as /dev/null) the command may read and write.
    pub write_files: Vec<PathBuf>,
    /// The egress proxy's loopback port: the only TCP port the command may connect to. `None`:
    /// no network at all (no IP sockets).
    pub proxy_port: Option<u16>,
    pub limits: Limits,
    /// The `cgroup.procs` file of the run's pids cgroup, which the launcher joins first.
    pub cgroup_procs: Option<PathBuf>,
    /// Behave as on a kernel without Landlock (refuse). Only ever makes a run stricter; the
    /// tests use it to check the refusal path on a kernel that has Landlock.
    #[serde(default)]
    pub assume_no_landlock: bool,
}
