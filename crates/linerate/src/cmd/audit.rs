//! `linerate audit`.

use std::process::ExitCode;

/// Arguments of `linerate audit`.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("audit", "Tuning knowledge")
}
