//! `linerate lab` on systems other than Linux: the test beds are built from Linux network
//! namespaces, veth pairs, netlink, packet sockets and nftables, so the command only says so.
//! It keeps its place in `--help` and accepts any arguments, so `linerate lab up …` fails with
//! that reason rather than as an unknown command.

use std::ffi::OsString;
use std::process::ExitCode;

/// Arguments of `linerate lab` (none are read on this system).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What would have been asked of the lab
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    rest: Vec<OsString>,
}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    Err(linerate_sys::os::NotOnThisOs::linux(
        "`linerate lab`",
        "its test beds are network namespaces joined by veth pairs, built over netlink, with \
         packet sockets and nftables",
    )
    .instead("run the lab on a Linux host and point `linerate client` at this one")
    .into())
}
