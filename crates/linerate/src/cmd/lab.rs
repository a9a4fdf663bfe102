//! `linerate lab`.

use std::process::ExitCode;

/// Arguments of `linerate lab`.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("lab", "The lab, part 1")
}
