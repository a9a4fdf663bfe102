//! `linerate lint`.

use std::process::ExitCode;

/// Arguments of `linerate lint`.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("lint", "Tuning knowledge")
}
