//! `linerate server`.

use std::process::ExitCode;

/// Arguments of `linerate server`.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("server", "Traffic engine, part 1")
}
