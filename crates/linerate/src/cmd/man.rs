//! `linerate man`: the man page (roff) generated from the clap definitions.

use std::process::ExitCode;

use clap::CommandFactory;

/// Arguments of `linerate man`.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    let command = crate::cli::Cli::command();
    let mut out = Vec::new();
    clap_mangen::Man::new(command).render(&mut out)?;
    crate::output::print_text(&String::from_utf8_lossy(&out))?;
    Ok(ExitCode::SUCCESS)
}
