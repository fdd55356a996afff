//! The supervisor side: spawns the launcher in its own process group, enforces the wall-clock
//! timeout by killing that group (and the run's cgroup), and after the command ends kills what
//! it left running in the background, so nothing outlives the run.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process, kill_process_group};

use crate::cgroup::Cgroup;

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOutcome {
    /// Its exit code, or 128 + the signal that ended it (as shells report it).
    pub code: i32,
    /// The wall-clock timeout killed it.
    pub timed_out: bool,
}

/// Runs the prepared launcher command to its end.
///
/// `own_group`: the command gets its own process group (the timeout kills all of it). A command
/// that reads the terminal must stay in the terminal's foreground group instead; then the
/// timeout kills the command itself and, where there is one, everything in the cgroup.
pub fn run(
    mut launcher: Command,
    timeout: Option<Duration>,
    own_group: bool,
    cgroup: Option<&Cgroup>,
) -> std::io::Result<RunOutcome> {
    if own_group {
        launcher.process_group(0);
    }
    let mut child = launcher.spawn()?;
    let raw = i32::try_from(child.id()).unwrap_or(i32::MAX);
    let pid = Pid::from_raw(raw);
    let kill = {
        let cgroup = cgroup.cloned();
        move || {
            if let Some(pid) = pid {
                if own_group {
                    let _ = kill_process_group(pid, Signal::KILL);
                } else {
                    let _ = kill_process(pid, Signal::KILL);
                }
            }
            if let Some(cg) = &cgroup {
                cg.kill_all();
            }
        }
    };
    let timed_out = Arc::new(AtomicBool::new(false));
    let (done, wait_done) = mpsc::channel::<()>();
    let watchdog = timeout.map(|t| {
        let timed_out = Arc::clone(&timed_out);
        let kill = kill.clone();
        std::thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = wait_done.recv_timeout(t) {
                timed_out.store(true, Ordering::SeqCst);
                kill();
            }
        })
    });
    let status = child.wait();
    let _ = done.send(());
    if let Some(w) = watchdog {
        let _ = w.join();
    }
    // Background processes the command left behind end with it.
    if own_group && let Some(pid) = pid {
        let _ = kill_process_group(pid, Signal::KILL);
    }
    let status = status?;
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1);
    Ok(RunOutcome {
        code,
        timed_out: timed_out.load(Ordering::SeqCst),
    })
}
