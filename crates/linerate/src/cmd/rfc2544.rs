//! `linerate rfc2544 --tx IF --rx IF`: RFC 2544 throughput of an external DUT cabled between
//! two tester ports (`rfc2544/tester.rs`), or with the counting port on another host behind
//! its `linerate server --allow-frame-counter`. What every RFC 2544 command shares lives here
//! too: the search's flags and plan (`search`), running the one procedure with progress,
//! storing and printing (`measure`, `render`; storing is `linerate_lab::record`'s), which
//! `lab rfc2544` calls for a lab.
//! Linux only: elsewhere the command says so.

#[cfg(target_os = "linux")]
pub mod measure;
#[cfg(target_os = "linux")]
mod render;
#[cfg(target_os = "linux")]
pub mod search;
#[cfg(target_os = "linux")]
mod tester;

#[cfg(target_os = "linux")]
pub use tester::{Args, run};

#[cfg(not(target_os = "linux"))]
pub use elsewhere::{Args, run};

#[cfg(not(target_os = "linux"))]
mod elsewhere {
    use std::ffi::OsString;
    use std::process::ExitCode;

    /// Arguments of `linerate rfc2544` (none are read on this system).
    #[derive(Debug, clap::Args)]
    pub struct Args {
        /// What would have been asked of the tester
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        rest: Vec<OsString>,
    }

    pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
        Err(linerate_sys::os::NotOnThisOs::linux(
            "`linerate rfc2544`",
            "its generator and counter are AF_PACKET and AF_XDP rings",
        )
        .instead("run the tester on a Linux host; this host can be the DUT")
        .into())
    }
}
