//! `linerate nic`.

use std::process::ExitCode;

/// Arguments of `linerate nic`.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("nic", "Host and NIC inspection")
}
