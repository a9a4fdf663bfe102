//! Reads the host into a serialisable [`HostSnapshot`]: OS, CPU topology and SMT, governors,
//! memory, every interface (driver, link, MTU, queues, rings, offloads, coalescing, RSS, IRQs
//! and their affinity, PCIe link), softnet counters. Linux reads sysfs, procfs and the ethtool
//! ioctl; the roots are injectable ([`ProbeRoots`]) so captured trees and saved snapshots are
//! judged offline exactly like the live host.
//!
//! On top of the snapshot: [`analysis`] (bus verdicts, what bounds packet rate),
//! [`hardware_findings`] (the shared finding model) and [`watch`] (live per-queue rates).
//!
//! ```no_run
//! use linerate_probe::{HardwareContext, HostSnapshot, ProbeRoots, Role, hardware_findings};
//! let snapshot = HostSnapshot::capture(&ProbeRoots::live());
//! let ctx = HardwareContext::for_snapshot(&snapshot, Role::Router);
//! for finding in hardware_findings(&snapshot, &ctx) {
//!     println!("{}: {}", finding.rule, finding.why);
//! }
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod analysis;
pub mod ethtool;
mod findings;
pub mod host;
pub mod interface;
pub mod irq;
pub mod pcie;
mod probed;
pub mod qstats;
mod queue;
mod roots;
mod snapshot;
pub mod softnet;
pub mod watch;

pub use ethtool::EthtoolInfo;
pub use findings::{HardwareContext, Role, hardware_findings, line_rate_text};
pub use interface::Interface;
pub use probed::Probed;
pub use roots::{EthtoolSource, ProbeRoots, format_cpu_list, parse_cpu_list, parse_cpu_mask};
pub use snapshot::{HostSnapshot, SCHEMA, SnapshotError};
pub use softnet::SoftnetCpu;
