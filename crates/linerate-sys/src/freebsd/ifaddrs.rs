//! The interfaces and their link-level data, from `getifaddrs(3)`: for each interface its
//! `AF_LINK` entry carries a `sockaddr_dl` (index, MAC address) and a `struct if_data` (MTU,
//! line speed, link state, the counters `netstat -i` prints). nix's `getifaddrs` drops
//! `ifa_data`, so the list is walked here.

use std::ffi::CStr;
use std::io;

/// Link state (`LINK_STATE_*` in `<net/if.h>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    /// The driver does not say.
    Unknown,
    /// No carrier.
    Down,
    /// Carrier.
    Up,
}

/// Counters of one interface (`struct if_data`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkCounters {
    /// Packets received.
    pub ipackets: u64,
    /// Input errors.
    pub ierrors: u64,
    /// Packets sent.
    pub opackets: u64,
    /// Output errors.
    pub oerrors: u64,
    /// Bytes received.
    pub ibytes: u64,
    /// Bytes sent.
    pub obytes: u64,
    /// Dropped on input (no buffer, queue full).
    pub iqdrops: u64,
    /// Dropped on output.
    pub oqdrops: u64,
}

/// One interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IfLink {
    /// Name (`ix0`).
    pub name: String,
    /// Interface index.
    pub index: u32,
    /// `IFF_*` flags.
    pub flags: u32,
    /// MAC address, when the interface has a six-byte one.
    pub mac: Option<[u8; 6]>,
    /// MTU in bytes.
    pub mtu: u32,
    /// Line speed in bits/s as the driver reports it (0: unknown).
    pub baudrate: u64,
    /// Carrier.
    pub link_state: LinkState,
    /// Counters at the time of the call.
    pub counters: LinkCounters,
}

impl IfLink {
    /// Administratively up (`IFF_UP`).
    pub fn up(&self) -> bool {
        self.flags & libc::IFF_UP as u32 != 0
    }

    /// Resources allocated, running (`IFF_RUNNING`, `IFF_DRV_RUNNING`).
    pub fn running(&self) -> bool {
        self.flags & libc::IFF_RUNNING as u32 != 0
    }

    /// The loopback interface (`IFF_LOOPBACK`).
    pub fn loopback(&self) -> bool {
        self.flags & libc::IFF_LOOPBACK as u32 != 0
    }
}

/// Frees the list when dropped.
struct List(*mut libc::ifaddrs);

impl Drop for List {
    #[expect(unsafe_code)]
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: the pointer came from a successful getifaddrs and is freed once, here.
            unsafe { libc::freeifaddrs(self.0) };
        }
    }
}

/// Every interface with its link data, in the kernel's order.
#[expect(unsafe_code)]
pub fn links() -> io::Result<Vec<IfLink>> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs stores a list head in `head`, which `List` frees on every path.
    if unsafe { libc::getifaddrs(&raw mut head) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let list = List(head);
    let mut out = Vec::new();
    let mut at = list.0;
    while !at.is_null() {
        // SAFETY: `at` is a node of the list getifaddrs returned, alive until `list` drops.
        let ifa = unsafe { &*at };
        at = ifa.ifa_next;
        if ifa.ifa_addr.is_null() || ifa.ifa_name.is_null() || ifa.ifa_data.is_null() {
            continue;
        }
        // SAFETY: ifa_addr is non-null and points at a sockaddr of at least its family field.
        let family = i32::from(unsafe { (*ifa.ifa_addr).sa_family });
        if family != libc::AF_LINK {
            continue;
        }
        // SAFETY: an AF_LINK address is a sockaddr_dl; its name and address bytes are read
        // only within sdl_data's fixed 46 bytes below.
        let dl = unsafe { &*ifa.ifa_addr.cast::<libc::sockaddr_dl>() };
        // SAFETY: for AF_LINK entries ifa_data points at the interface's struct if_data.
        let data = unsafe { &*ifa.ifa_data.cast::<libc::if_data>() };
        // SAFETY: ifa_name is a NUL-terminated string owned by the list.
        let name = unsafe { CStr::from_ptr(ifa.ifa_name) };
        let (nlen, alen) = (usize::from(dl.sdl_nlen), usize::from(dl.sdl_alen));
        let mac = (alen == 6 && nlen + 6 <= dl.sdl_data.len()).then(|| {
            let mut m = [0u8; 6];
            for (i, b) in m.iter_mut().enumerate() {
                *b = dl.sdl_data[nlen + i] as u8;
            }
            m
        });
        out.push(IfLink {
            name: name.to_string_lossy().into_owned(),
            index: u32::from(dl.sdl_index),
            flags: ifa.ifa_flags,
            mac,
            mtu: data.ifi_mtu,
            baudrate: data.ifi_baudrate,
            link_state: match i32::from(data.ifi_link_state) {
                libc::LINK_STATE_UP => LinkState::Up,
                libc::LINK_STATE_DOWN => LinkState::Down,
                _ => LinkState::Unknown,
            },
            counters: LinkCounters {
                ipackets: data.ifi_ipackets,
                ierrors: data.ifi_ierrors,
                opackets: data.ifi_opackets,
                oerrors: data.ifi_oerrors,
                ibytes: data.ifi_ibytes,
                obytes: data.ifi_obytes,
                iqdrops: data.ifi_iqdrops,
                oqdrops: data.ifi_oqdrops,
            },
        });
    }
    Ok(out)
}

// Run on FreeBSD only; type-checked on Linux by CI's FreeBSD clippy step.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_listed_with_its_mtu() {
        let links = links().unwrap();
        let lo = links.iter().find(|l| l.loopback()).expect("lo0");
        assert_eq!(lo.name, "lo0");
        assert!(lo.up() && lo.mtu > 0 && lo.index > 0);
    }
}
