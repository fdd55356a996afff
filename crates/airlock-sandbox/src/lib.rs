//! airlock's containment. A command airlock allowed runs inside kernel-enforced limits: Landlock
//! (which paths it may read and write, which TCP ports it may connect to), a seccomp filter (no
//! ptrace, mount, kexec, bpf, keyrings, module loading, raw sockets, new user namespaces; no
//! IP socket but a TCP stream, and that only with a network grant), rlimits, its own process
//! group (and a pids cgroup where airlock may make one) and a wall-clock timeout; its network
//! goes through an egress proxy that lets through only granted hosts, and credentials are
//! removed from its environment.
//!
//! The work is split between two processes so that no `unsafe` is needed: the supervisor
//! ([`supervise`]) starts the proxy and the timer and spawns the launcher (the `airlock` binary
//! again); the launcher ([`launch::confine_and_exec`]) confines itself and `exec`s the command.
//! Where the kernel lacks Landlock the launcher refuses: nothing ever runs unconfined.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod cgroup;
pub mod egress;
pub mod environment;
mod error;
pub mod launch;
mod limits;
mod plan;
pub mod profile;
mod rules_fs;
mod rules_syscall;
pub mod supervise;

pub use error::SandboxError;
pub use plan::{Limits, Plan};
pub use profile::{Profile, protected_paths};

/// The exit code of `airlock run` when it refused to start the command (no Landlock, a bad
/// profile, a grant that cannot be used): like `env`'s and `timeout`'s 125, "the wrapper
/// failed", distinct from any code of the command's own.
pub const EXIT_REFUSED: u8 = 125;
/// The exit code when the wall-clock timeout killed the command (as `timeout(1)`).
pub const EXIT_TIMEOUT: u8 = 124;
