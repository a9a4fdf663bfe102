//! The Linux backend. Each module is re-exported at the crate root under its own name; the
//! FreeBSD backend (`freebsd`) sits beside this one with the modules that OS has.

pub mod affinity;
pub mod clock;
pub mod ethtool;
pub mod netlink;
pub mod netns;
pub mod netstat;
pub mod packet;
mod packet_ring;
pub mod perf;
pub mod rxring;
mod shared_map;
pub mod socket;
pub mod tcp_zerocopy;
pub mod thread;
pub mod txring;
pub mod udp_rx;
pub mod xdp;
