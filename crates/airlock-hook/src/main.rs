//! `airlock-hook`: the pre-tool hook alone, for agents to run on every tool call. It answers
//! exactly as `airlock hook` does (same library), but links only what deciding needs, so it
//! starts in a fraction of the full binary's time. `airlock hook install` points agents at it
//! when it sits beside `airlock`.

use std::process::ExitCode;

use airlock_hook::daemon::{Handoff, Remote};

const USAGE: &str = "\
airlock-hook: the pre-tool hook for Claude Code, Codex, Gemini CLI and Copilot.
Reads one tool call (JSON) on stdin and answers in the agent's dialect.

Usage: airlock-hook [--agent claude|codex|gemini|copilot]

Install it with `airlock hook install <agent>`.
";

fn main() -> ExitCode {
    // `args_os`: `args` panics on an argument that is not UTF-8.
    let args: Option<Vec<String>> = std::env::args_os()
        .skip(1)
        .take(3)
        .map(|a| a.into_string().ok())
        .collect();
    let Some(args) = args else {
        eprintln!("airlock-hook: an argument is not UTF-8\n\n{USAGE}");
        return ExitCode::from(airlock_hook::EXIT_USAGE);
    };
    if let Some(forced) = airlock_hook::agent_args(&args) {
        let handoff = Handoff {
            data_dir: airlock_hook::endpoint::data_dir_from_env(),
            remote: Remote::Delegate,
        };
        return ExitCode::from(airlock_hook::respond(forced, &handoff));
    }
    match args.as_slice() {
        [h] if h == "--help" || h == "-h" => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        [v] if v == "--version" || v == "-V" => {
            println!("airlock-hook {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        // A hook with a bad command line must still block the tool call.
        _ => {
            eprintln!("airlock-hook: unexpected arguments {args:?}\n\n{USAGE}");
            ExitCode::from(airlock_hook::EXIT_USAGE)
        }
    }
}
