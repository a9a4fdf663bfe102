//! The FreeBSD backend. Each public module is re-exported at the crate root under the same name
//! as its Linux counterpart, with the same functions where the OS has the same facility
//! (`affinity`, `socket`). The sysctl calls sit beside their portable codec, in
//! `sysctl/freebsd.rs`. Nothing here can be run on the Linux machine this crate is
//! developed on: the code is type-checked and linted for `x86_64-unknown-freebsd` in CI, and
//! the logic that does not need the kernel (value codec, CPU masks, `if_data` mapping) is
//! unit-tested on every OS in the portable modules.

pub mod affinity;
pub mod ifaddrs;
pub mod socket;
