//! `linerate history`.

use std::process::ExitCode;

/// Arguments of `linerate history`.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("history", "Results store")
}
