//! The Linux backend. Each module is re-exported at the crate root under its own name; the
//! FreeBSD backend (`freebsd`) sits beside this one with the modules that OS has.

pub mod affinity;
pub mod ethtool;
pub mod netlink;
pub mod netns;
pub mod packet;
// The ring buffer of perf_event_open has no safe wrapper that fits (see the module): the one
// module of the workspace allowed `unsafe`, each block with its `// SAFETY:`.
#[allow(unsafe_code)]
pub mod perf;
pub mod socket;
pub mod thread;
