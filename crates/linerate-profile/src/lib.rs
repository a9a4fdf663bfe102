//! CPU profiles: where the time goes, on a host or in a lab run.
//!
//! Taking a profile (Linux): call stacks are sampled on every CPU (or of one process) through
//! `perf_event_open` (the syscalls, rings and record decoding are `linerate-sys`'s), kernel
//! frames are named from `/proc/kallsyms` and user frames from the mapped ELF files' symbol
//! tables (else `module+offset`), and the samples become folded stacks and an attribution
//! (per CPU, network namespace, softirq, kernel subsystem). Reading profiles back works
//! everywhere: folded stacks parse, stored breakdowns read through their one type, and the
//! per-run shares of two variants compare by Student's t.
//!
//! - [`capture`] (Linux): one profile taken in the background while the caller works.
//! - [`session`] (Linux): `linerate profile`'s procedure — sampling around a command, for a
//!   duration, or until stopped.
//! - [`cpus`] (Linux): the online CPUs and CPU lists (`0-3,6`).
//! - [`fold`]: folded stacks (`root;…;leaf COUNT`) and the top functions.
//! - [`attribution`]: samples counted per CPU, context and subsystem.
//! - [`breakdown`]: the attribution's shares as printed and stored (one serde type).
//! - [`shares`] and [`variants`]: which functions' and subsystems' shares changed between
//!   variants of an experiment, with a confidence from the repetitions.
//!
//! Nothing here prints: the binary renders what these return; flame graphs are drawn by
//! `linerate-report`. On other systems taking a profile is absent (no stubs) and
//! [`ProfileError::NeedsLinux`] is what the binary says.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod attribution;
pub mod breakdown;
#[cfg(target_os = "linux")]
pub mod capture;
#[cfg(target_os = "linux")]
pub mod cpus;
mod error;
pub mod fold;
#[cfg(target_os = "linux")]
mod kallsyms;
#[cfg(target_os = "linux")]
mod maps;
#[cfg(target_os = "linux")]
pub mod session;
pub mod shares;
pub mod variants;

pub use breakdown::{Breakdown, Share};
#[cfg(target_os = "linux")]
pub use capture::{Capture, Captured};
pub use error::{CpuListError, ProfileError};
pub use fold::{Folded, FoldedError, TopFunction};
#[cfg(target_os = "linux")]
pub use linerate_sys::perf::{Event, Target};
