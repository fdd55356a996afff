//! `airlock-lab eval` (also run as `airlock eval`): runs the labelled corpora and prints measured detection quality.

use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    suite: Suite,
}

#[derive(clap::Subcommand)]
enum Suite {
    /// Shell-command corpora (dcg, tirith, Hermes vectors): recall and benign ask rate.
    Commands(commands::Args),
    /// Text-scanner corpora (jailbreaks, injections, crisis, benign sets): held-out recall and false positives.
    Text(text::Args),
}

pub mod commands;
mod commands_score;
mod corpus_commands;
pub mod text;
mod text_loso;

pub fn run(args: Args) -> Result<u8> {
    match args.suite {
        Suite::Commands(a) => commands::run(a),
        Suite::Text(a) => text::run(a),
    }
}
