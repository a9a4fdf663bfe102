//! `linerate report`.

use std::process::ExitCode;

/// Arguments of `linerate report`.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("report", "Results store")
}
