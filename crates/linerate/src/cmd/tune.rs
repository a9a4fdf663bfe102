//! `linerate tune`.

use std::process::ExitCode;

/// Arguments of `linerate tune`.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("tune", "Tuning knowledge")
}
