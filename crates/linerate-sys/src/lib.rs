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
//! | [`os`] | which OS this is, and [`os::NotOnThisOs`]: the one way to say a feature needs another OS | all |
//! | `cpu_time` | CPU time counters per CPU (`/proc/stat`; `kern.cp_times`) and per thread (`/proc/self/task/TID/stat`, Linux), their parsers | Linux, FreeBSD (threads: Linux) |
//! | [`fs`] | `atomic_write`/`atomic_create`: temp file, fsync, rename, fsync of the directory; an exclusive `flock` without waiting | Unix |
//! | [`process`] | effective uid (`is_root`), `kill`, the process's CPU times | Unix |
//! | [`signal`] | signal masks (block, unblock, take a pending one) and signal flags | Unix |
//! | [`sysctl`] | FreeBSD sysctl values: kinds, flags, decoding and encoding (all OSes, so it is tested everywhere); `sysctlbyname` reads, writes and subtree walks | codec: Unix; calls: FreeBSD |
//! | `affinity` | pin a thread to a CPU, the allowed set, the current CPU (`sched_setaffinity`; `cpuset_setaffinity`) | Linux, FreeBSD |
//! | `mmsg` | one batch type for `sendmmsg`/`recvmmsg` over fixed buffers | Linux, FreeBSD |
//! | `socket` | socket options std and socket2 lack (TCP_INFO in each OS's layout; Linux: UDP GSO, forced buffers; FreeBSD: SO_REUSEPORT, SO_REUSEPORT_LB), `ppoll` | Linux, FreeBSD |
//! | `clock` | the kernel clock's discipline (`adjtimex` read only: synchronised, error estimates) and the kernel's boot id | Linux |
//! | `ethtool` | the `SIOCETHTOOL` ioctl: driver, rings, channels, coalescing, features, RSS, stats; offload switches | Linux |
//! | `netlink` | one netlink socket for route (links, addresses, routes, neighbours, qdiscs) and generic netlink (`netdev` queue stats) | Linux |
//! | `netstat` | a namespace's UDP drop counters (`/proc/net/snmp`, `snmp6`) and interface counters (`/proc/net/dev`) | Linux |
//! | `netns` | network namespaces: create, name, enter, run a closure inside, remove | Linux |
//! | `packet` | AF_PACKET sockets bound to one interface, their drop counters | Linux |
//! | `tcp_zerocopy` | TCP receive without the copy (`TCP_ZEROCOPY_RECEIVE` into an `mmap` window of the socket) | Linux |
//! | `thread` | per-thread settings (timer slack) | Linux |
//! | `rxring` | AF_PACKET `TPACKET_V2` mmap receive ring (kernel timestamps, outgoing flag) | Linux |
//! | `txring` | AF_PACKET `TPACKET_V2` mmap transmit ring (send-only socket, qdisc bypass) | Linux |
//! | `perf` | `perf_event_open` stack sampling: one event and ring buffer per CPU, sample records decoded | Linux |
//! | `ifaddrs` | interfaces with their link data (`getifaddrs` with `struct if_data`: MTU, speed, link state, counters) | FreeBSD |
//!
//! Layout per OS: portable POSIX modules sit at the top; each OS backend is a module of its own
//! (`linux`, `freebsd`) whose modules are re-exported here under the same names, so callers
//! write `linerate_sys::affinity::pin_current_thread` on every OS that has it. What exists on
//! one OS only is absent on the others (no stubs): callers put it behind the same `cfg` and
//! say plainly that the feature needs that OS, with [`os::NotOnThisOs`]. Still to come in the Linux backend: AF_PACKET/
//! AF_XDP rings (beside `packet`).

#![deny(missing_docs)]

#[cfg(any(target_os = "linux", target_os = "freebsd"))]
pub mod cpu_time;
pub mod fs;
#[cfg(any(target_os = "linux", target_os = "freebsd"))]
pub mod mmsg;
pub mod os;
pub mod process;
pub mod signal;
pub mod sysctl;
#[cfg(any(target_os = "linux", target_os = "freebsd"))]
mod tcp_info;

#[cfg(target_os = "linux")]
mod linux;

#[cfg(target_os = "linux")]
pub use linux::{
    affinity, clock, ethtool, netlink, netns, netstat, packet, perf, rxring, socket, tcp_zerocopy,
    thread, txring, udp_rx, xdp,
};

#[cfg(target_os = "freebsd")]
mod freebsd;

#[cfg(target_os = "freebsd")]
pub use freebsd::{affinity, ifaddrs, socket};

pub use fs::{atomic_create, atomic_write};
pub use process::is_root;
