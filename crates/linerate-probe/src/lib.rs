//! Reads the host into a serialisable [`HostSnapshot`]: OS, CPU topology and SMT, governors,
//! memory, every interface (driver, link, MTU, queues, rings, offloads, coalescing, RSS, IRQs
//! and their affinity, PCIe link), softnet counters. Linux reads sysfs, procfs and the ethtool
//! ioctl; the roots are injectable ([`ProbeRoots`]) so captured trees and saved snapshots are
//! judged offline exactly like the live host. FreeBSD hosts are read from sysctl, `getifaddrs`,
//! `vmstat -i` and `pciconf -lvc` live, or from a `sysctl -a` dump taken on them
//! ([`freebsd::snapshot`]).
//!
//! Beside the snapshot: [`links`] (which ports share which PCI link), [`watch`] (live
//! per-queue rates) and [`tunnel`] (what a tunnel daemon and its tun device showed). The
//! probe reads and never judges: the rules that judge a snapshot (bus too slow, SMT on a
//! router, rings below their maximum…) and a tunnel's observation live in `linerate-tuning`
//! beside the settings rules.
//!
//! ```no_run
//! use linerate_probe::{HostSnapshot, ProbeRoots, links};
//! let snapshot = HostSnapshot::capture(&ProbeRoots::live());
//! for link in links::shared_links(&snapshot) {
//!     println!("{} ({}): {}", link.slot, link.bus, link.interfaces.join(", "));
//! }
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod egress;
pub mod ethtool;
pub mod freebsd;
pub mod host;
pub mod interface;
pub mod irq;
pub mod links;
mod local;
pub mod pcie;
mod probed;
#[cfg(target_os = "linux")]
pub mod qstats;
mod queue;
mod roots;
mod sample;
mod snapshot;
pub mod softnet;
pub mod tunnel;
pub mod watch;

pub use ethtool::EthtoolInfo;
pub use interface::Interface;
pub use local::LocalHost;
pub use probed::Probed;
pub use roots::{EthtoolSource, ProbeRoots, format_cpu_list, parse_cpu_list, parse_cpu_mask};
pub use snapshot::{HostSnapshot, SCHEMA, SnapshotError, UnknownInterface, check_names};
pub use softnet::SoftnetCpu;
