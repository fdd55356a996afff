//! A pids cgroup for one run, where airlock may make one (root, or a delegated hierarchy). It
//! caps the number of processes of this run alone (RLIMIT_NPROC counts all of a user's
//! processes, and root ignores it) and lets the supervisor kill everything the command started,
//! even processes that left its process group. Best effort: without one, the rlimit and the
//! process group remain.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process};

#[derive(Debug, Clone)]
pub struct Cgroup {
    dir: PathBuf,
}

impl Cgroup {
    /// Makes a child of this process's pids cgroup with `pids.max = max`, or `None` where that
    /// is not possible.
    pub fn create(max: u64) -> Option<Cgroup> {
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let name = format!("airlock-run-{}-{}", std::process::id(), nanos());
        for (base, rel) in candidates(&own) {
            let dir = base.join(rel.trim_start_matches('/')).join(&name);
            if std::fs::create_dir(&dir).is_err() {
                continue;
            }
            let cg = Cgroup { dir };
            if std::fs::write(cg.dir.join("pids.max"), max.to_string()).is_ok() {
                return Some(cg);
            }
            cg.remove();
        }
        None
    }

    /// The file the launcher writes its pid into to join.
    pub fn procs(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Kills every process in the cgroup (repeatedly: a process may fork while it is read).
    pub fn kill_all(&self) {
        for _ in 0..50 {
            let pids = self.members();
            if pids.is_empty() {
                return;
            }
            for p in pids {
                if let Some(pid) = Pid::from_raw(p) {
                    let _ = kill_process(pid, Signal::KILL);
                }
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn members(&self) -> Vec<i32> {
        std::fs::read_to_string(self.procs())
            .map(|s| s.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// Kills what is left and removes the cgroup (an empty cgroup is removed with rmdir).
    pub fn remove(self) {
        self.kill_all();
        for _ in 0..100 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// Where a pids hierarchy may be, with this process's place in it: cgroup v1's `pids`
/// controller, then the v2 unified hierarchy (either mount point).
fn candidates(own: &str) -> Vec<(PathBuf, String)> {
    let mut v = Vec::new();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, ctrl, path) = (parts.next(), parts.next(), parts.next());
        let (Some(ctrl), Some(path)) = (ctrl, path) else {
            continue;
        };
        if ctrl.split(',').any(|c| c == "pids") {
            v.push((PathBuf::from("/sys/fs/cgroup/pids"), path.to_string()));
        } else if ctrl.is_empty() {
            v.push((PathBuf::from("/sys/fs/cgroup"), path.to_string()));
            v.push((PathBuf::from("/sys/fs/cgroup/unified"), path.to_string()));
        }
    }
    v
}

fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}
