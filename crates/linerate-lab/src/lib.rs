//! Network-namespace test beds with link emulation.
//!
//! A lab is a set of network namespaces named `lr-NAME-*` joined by veth pairs, addressed from
//! 198.18.0.0/15 (see [`topology`]), built over netlink in well under 200 ms ([`build::up`]) and
//! removed from its state file whatever happened to it ([`teardown::down`]). A link can be
//! impaired (rate, delay, jitter, loss, queue limit): with kernel netem where the kernel has it
//! ([`netem`]), otherwise with linerate's own userspace emulator ([`emulator`]), a process in a
//! middle namespace bridging the two veths through packet sockets.
//!
//! No terminal output here: functions return data and typed errors. System calls go through
//! `linerate-sys`.
//!
//! Linux only: namespaces, veth, netlink, packet sockets and nftables are Linux's, so on other
//! systems the crate is empty and `linerate lab` says it needs Linux.

#![cfg(target_os = "linux")]
#![forbid(unsafe_code)]

pub mod bed;
pub mod build;
mod child;
pub mod control;
pub mod emulator;
mod error;
pub mod experiment;
pub mod firewall;
pub mod hosts;
pub mod impair;
pub mod name;
pub mod netem;
pub mod netns;
pub mod profiled;
pub mod record;
pub mod rfc2544;
pub mod runner;
pub mod spec;
pub mod state;
pub mod sysctl;
pub mod teardown;
pub mod topology;
pub mod tunnel;

pub use build::{UpOptions, UpReport, up};
pub use error::LabError;
pub use impair::Impairment;
pub use name::LabName;
pub use spec::{EmulatorChoice, LabSpec, LinkOptions, NodeSysctl};
pub use state::{EmulatorKind, LabState, StateDir};
pub use teardown::{DownReport, down};

/// Whether the calling process runs as root (the lab needs CAP_SYS_ADMIN and CAP_NET_ADMIN).
pub fn is_root() -> bool {
    linerate_sys::is_root()
}
