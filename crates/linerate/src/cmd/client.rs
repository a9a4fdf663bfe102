//! `linerate client`.

use std::process::ExitCode;

/// Arguments of `linerate client`.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("client", "Traffic engine, part 1")
}
