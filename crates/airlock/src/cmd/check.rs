//! `airlock check`: one command line in, a decision out.

use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    /// Print the assessment as JSON.
    #[arg(long)]
    json: bool,
    /// The command line to check (everything after `--`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    command: Vec<String>,
}

pub fn run(args: Args) -> Result<u8> {
    let line = args.command.join(" ");
    let a = airlock_shell::analyse(&line);
    if args.json {
        println!("{}", serde_json::to_string(&a)?);
    } else {
        println!("{} (tier {})", a.decision, a.tier);
    }
    Ok(super::exit_code(a.decision))
}
