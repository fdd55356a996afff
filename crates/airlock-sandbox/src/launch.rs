//! The launcher: runs inside the child process, confines it (pids cgroup, rlimits, Landlock,
//! seccomp, in that order: each step needs what the next one takes away) and replaces itself
//! with the command. It returns only on failure, and then the command never ran.

use std::os::unix::process::CommandExt;

use crate::{Plan, SandboxError, limits, rules_fs, rules_syscall};

/// Confines the calling process as `plan` says and `exec`s the command. On success it does not
/// return; the error says why the command was not run.
pub fn confine_and_exec(plan: &Plan) -> SandboxError {
    if plan.argv.is_empty() {
        return SandboxError::Invalid("no command to run".into());
    }
    if let Err(e) = confine(plan) {
        return e;
    }
    exec_command(plan)
}

/// Replaces the (already confined) process with the command; returns only on failure.
pub fn exec_command(plan: &Plan) -> SandboxError {
    let Some((program, args)) = plan.argv.split_first() else {
        return SandboxError::Invalid("no command to run".into());
    };
    let err = std::process::Command::new(program).args(args).exec();
    SandboxError::Invalid(format!("cannot run {program:?}: {err}"))
}

/// What both launchers (`airlock sandbox-exec` and `airlock-sandbox-exec`) do: confine, say
/// what the kernel enforces when `AIRLOCK_RUN_VERBOSE` is set, exec. Returns only on refusal.
pub fn run_plan(plan: &Plan) -> SandboxError {
    if plan.argv.is_empty() {
        return SandboxError::Invalid("no command to run".into());
    }
    let account = match confine(plan) {
        Ok(a) => a,
        Err(e) => return e,
    };
    if std::env::var_os("AIRLOCK_RUN_VERBOSE").is_some() {
        eprintln!(
            "airlock run: confined by {account}, seccomp and rlimits{}; read {} trees, write {}; network {}",
            if plan.cgroup_procs.is_some() {
                ", a pids cgroup"
            } else {
                ""
            },
            plan.read.len(),
            plan.write.len() + plan.write_files.len(),
            match plan.proxy_port {
                Some(p) => format!("only through the egress proxy on 127.0.0.1:{p}"),
                None => "none".into(),
            }
        );
    }
    exec_command(plan)
}

/// Everything but the exec; returns the account of what the kernel enforces.
pub fn confine(plan: &Plan) -> Result<String, SandboxError> {
    if let Some(procs) = &plan.cgroup_procs {
        std::fs::write(procs, std::process::id().to_string())
            .map_err(|e| SandboxError::setup(format!("joining {}", procs.display()), e))?;
    }
    limits::apply(&plan.limits)?;
    let account = rules_fs::apply(plan)?;
    rules_syscall::apply(plan.proxy_port.is_some())?;
    Ok(account)
}
