//! The Linux backend. Each module is re-exported at the crate root under its own name; a
//! FreeBSD backend will sit beside this one with the modules that OS has.

pub mod affinity;
pub mod ethtool;
pub mod mmsg;
pub mod netlink;
pub mod netns;
pub mod packet;
pub mod socket;
pub mod thread;
