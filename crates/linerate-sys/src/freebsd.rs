//! The FreeBSD backend. Each public module is re-exported at the crate root under the same name
//! as its Linux counterpart, with the same functions where the OS has the same facility
//! (`affinity`, `socket`); `sysctl` fills in the calls of the crate's portable
//! [`crate::sysctl`] codec. Nothing here can be run on the Linux machine this crate is
//! developed on: the code is type-checked and linted for `x86_64-unknown-freebsd` in CI, and
//! the logic that does not need the kernel (value codec, CPU masks, `if_data` mapping) is
//! unit-tested on every OS in the portable modules.

pub mod affinity;
pub mod ifaddrs;
pub mod socket;
pub(crate) mod sysctl;
