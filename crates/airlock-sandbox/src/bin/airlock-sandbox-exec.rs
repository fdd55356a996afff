//! `airlock-sandbox-exec PLAN`: the launcher half of `airlock run` as a small program of its own.
//! It starts once per confined command, so its start-up is part of every run's cost; this
//! binary links only the confinement (no command-line parser, store or HTTP stack), and
//! `airlock run` prefers it when it sits beside `airlock` (else it runs `airlock sandbox-exec`,
//! the same code). Exit 125 when it refuses; on success it has become the command.

use std::process::ExitCode;

use airlock_sandbox::{EXIT_REFUSED, Plan};

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let [plan] = args.as_slice() else {
        eprintln!("usage: airlock-sandbox-exec PLAN (started by `airlock run`)");
        return ExitCode::from(EXIT_REFUSED);
    };
    let plan: Plan = match plan.to_str().map(serde_json::from_str) {
        Some(Ok(p)) => p,
        Some(Err(e)) => {
            eprintln!("airlock run: refused: a malformed sandbox plan: {e}");
            return ExitCode::from(EXIT_REFUSED);
        }
        None => {
            eprintln!("airlock run: refused: the sandbox plan is not UTF-8");
            return ExitCode::from(EXIT_REFUSED);
        }
    };
    let e = airlock_sandbox::launch::run_plan(&plan);
    eprintln!("airlock run: refused: {e}");
    ExitCode::from(EXIT_REFUSED)
}
