//! `linerate completions SHELL`: completion scripts generated from the clap definitions.

use std::process::ExitCode;

use clap::CommandFactory;
use clap_complete::Shell;

/// Arguments of `linerate completions`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell to generate completions for
    #[arg(value_enum)]
    pub shell: Shell,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut command = crate::cli::Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, "linerate", &mut out);
    crate::output::print_text(&String::from_utf8_lossy(&out))?;
    Ok(ExitCode::SUCCESS)
}
