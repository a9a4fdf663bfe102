//! The one OS boundary of linerate. Every system call the engines make that std does not wrap
//! goes through this crate, and **all `unsafe` code of the workspace lives here**: every other
//! crate forbids it. Each `unsafe` block carries a `// SAFETY:` comment; where a maintained crate
//! wraps a call safely (nix, the rust-netlink crates, tempfile, signal-hook) it is used instead
//! of a hand-written block, and each hand-written one says why no crate fits.
//!
//! What it owns:
//!
//! | module | what | OS |
//! |---|---|---|
//! | [`fs`] | `atomic_write`/`atomic_create`: temp file, fsync, rename, fsync of the directory | Unix |
//! | [`process`] | effective uid (`is_root`), `kill`, the process's CPU times | Unix |
//! | [`signal`] | signal masks (block, unblock, take a pending one) and signal flags | Unix |
//! | `affinity` | pin a thread to a CPU, the allowed set, the current CPU | Linux |
//! | `ethtool` | the `SIOCETHTOOL` ioctl: driver, rings, channels, coalescing, features, RSS, stats; offload switches | Linux |
//! | `mmsg` | one batch type for `sendmmsg`/`recvmmsg` over fixed buffers | Linux |
//! | `netlink` | one netlink socket for route (links, addresses, routes, neighbours, qdiscs) and generic netlink (`netdev` queue stats) | Linux |
//! | `netns` | network namespaces: create, name, enter, run a closure inside, remove | Linux |
//! | `packet` | AF_PACKET sockets bound to one interface, their drop counters | Linux |
//! | `socket` | socket options std and socket2 lack (TCP_INFO, UDP GSO, forced buffers), `ppoll` | Linux |
//! | `thread` | per-thread settings (timer slack) | Linux |
//!
//! Layout per OS: portable POSIX modules sit at the top; each OS backend is a module of its own
//! (`linux`, later `freebsd` beside it for sysctlbyname, cpuset_setaffinity, SO_REUSEPORT_LB
//! and FreeBSD's TCP_INFO) whose modules are re-exported here under the same names, so callers
//! write `linerate_sys::affinity::pin_current_thread` on every OS that has it. Still to come
//! in the Linux backend: AF_PACKET/AF_XDP rings (beside `packet`) and `perf_event_open`
//! sampling (a `perf` module).

#![deny(missing_docs)]

pub mod fs;
pub mod process;
pub mod signal;

#[cfg(target_os = "linux")]
mod linux;

#[cfg(target_os = "linux")]
pub use linux::{affinity, ethtool, mmsg, netlink, netns, packet, socket, thread};

pub use fs::{atomic_create, atomic_write};
pub use process::is_root;
