//! The `SIOCETHTOOL` ioctl: each query is one command word followed by its structure, laid out
//! as in `<linux/ethtool.h>`. Buffers are plain byte vectors read with `from_ne_bytes`; the only
//! unsafe code is the syscalls themselves.

use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::{Channels, Coalesce, DriverInfo, EthtoolInfo, Feature, Rings};
use crate::Probed;

const SIOCETHTOOL: u64 = 0x8946;
const IFNAMSIZ: usize = 16;

const ETHTOOL_GDRVINFO: u32 = 0x03;
const ETHTOOL_GCOALESCE: u32 = 0x0e;
const ETHTOOL_GRINGPARAM: u32 = 0x10;
const ETHTOOL_GSTRINGS: u32 = 0x1b;
const ETHTOOL_GSTATS: u32 = 0x1d;
const ETHTOOL_GSSET_INFO: u32 = 0x37;
const ETHTOOL_GRXFHINDIR: u32 = 0x38;
const ETHTOOL_GFEATURES: u32 = 0x3a;
const ETHTOOL_GCHANNELS: u32 = 0x3c;

const ETH_SS_STATS: u32 = 1;
const ETH_SS_FEATURES: u32 = 4;
const ETH_GSTRING_LEN: usize = 32;

/// Upper bounds on counts the kernel reports, so a confused driver cannot make us allocate
/// gigabytes.
const MAX_STRINGS: u32 = 65_536;
const MAX_INDIR: u32 = 65_536;

/// `struct ifreq` with the `ifr_data` member of its union.
#[repr(C)]
struct IfReq {
    name: [u8; IFNAMSIZ],
    data: *mut libc::c_void,
    _pad: [u8; 16],
}

/// An `AF_INET` datagram socket to address ioctls to (any socket works; this one always exists).
struct Socket(OwnedFd);

impl Socket {
    fn open() -> io::Result<Self> {
        for family in [libc::AF_INET, libc::AF_UNIX] {
            #[expect(unsafe_code)]
            // SAFETY: socket(2) takes no pointers; a non-negative result is a new descriptor
            // that nothing else owns, so OwnedFd may take it.
            let fd = unsafe { libc::socket(family, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
            if fd >= 0 {
                #[expect(unsafe_code)]
                // SAFETY: fd is a fresh, valid descriptor owned by no one else.
                return Ok(Socket(unsafe { OwnedFd::from_raw_fd(fd) }));
            }
        }
        Err(io::Error::last_os_error())
    }

    /// Runs one ethtool command whose structure (command word first) is `buf`.
    fn ethtool(&self, iface: &str, buf: &mut [u8]) -> io::Result<()> {
        let name = iface.as_bytes();
        if name.is_empty() || name.len() >= IFNAMSIZ || name.contains(&0) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a valid interface name",
            ));
        }
        let mut req = IfReq {
            name: [0; IFNAMSIZ],
            data: buf.as_mut_ptr().cast(),
            _pad: [0; 16],
        };
        req.name[..name.len()].copy_from_slice(name);
        #[expect(unsafe_code)]
        // SAFETY: `req` is a valid `struct ifreq` whose name is NUL-terminated and whose data
        // pointer points at `buf`, which is large enough for the structure the command word in
        // it selects (each caller sizes it from <linux/ethtool.h>); both outlive the call.
        let rc =
            unsafe { libc::ioctl(self.0.as_raw_fd(), SIOCETHTOOL as _, &mut req as *mut IfReq) };
        if rc < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }
}

fn command(cmd: u32, len: usize) -> Vec<u8> {
    let mut buf = vec![0u8; len.max(4)];
    buf[..4].copy_from_slice(&cmd.to_ne_bytes());
    buf
}

fn put_u32(buf: &mut [u8], word: usize, v: u32) {
    buf[word * 4..word * 4 + 4].copy_from_slice(&v.to_ne_bytes());
}

fn u32_at(buf: &[u8], offset: usize) -> u32 {
    let mut b = [0u8; 4];
    if let Some(s) = buf.get(offset..offset + 4) {
        b.copy_from_slice(s);
    }
    u32::from_ne_bytes(b)
}

fn word(buf: &[u8], index: usize) -> u32 {
    u32_at(buf, index * 4)
}

fn u64_at(buf: &[u8], offset: usize) -> u64 {
    let mut b = [0u8; 8];
    if let Some(s) = buf.get(offset..offset + 8) {
        b.copy_from_slice(s);
    }
    u64::from_ne_bytes(b)
}

fn c_string(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

fn why(what: &str, err: &io::Error) -> String {
    match err.raw_os_error() {
        Some(libc::EOPNOTSUPP) => format!("the driver does not report {what} (EOPNOTSUPP)"),
        Some(libc::ENODEV) => "no such interface in this network namespace".to_owned(),
        Some(libc::EPERM) | Some(libc::EACCES) => {
            format!("{what}: permission denied (needs CAP_NET_ADMIN for some drivers)")
        }
        _ => format!("{what}: {err}"),
    }
}

/// Reads everything; each part fails on its own.
pub(super) fn read_all(iface: &str) -> EthtoolInfo {
    let sock = match Socket::open() {
        Ok(s) => s,
        Err(e) => return EthtoolInfo::unknown(&format!("cannot open a socket for ethtool: {e}")),
    };
    EthtoolInfo {
        driver: drvinfo(&sock, iface).into(),
        rings: rings(&sock, iface).into(),
        channels: channels(&sock, iface).into(),
        coalesce: coalesce(&sock, iface).into(),
        features: features(&sock, iface).into(),
        rss_indirection: rss_indirection(&sock, iface).into(),
        stats: stats(&sock, iface).into(),
    }
}

/// Reads only the driver statistics.
pub(super) fn read_stats(iface: &str) -> Probed<BTreeMap<String, u64>> {
    match Socket::open() {
        Ok(sock) => stats(&sock, iface).into(),
        Err(e) => Probed::unknown(format!("cannot open a socket for ethtool: {e}")),
    }
}

fn drvinfo(sock: &Socket, iface: &str) -> Result<DriverInfo, String> {
    // struct ethtool_drvinfo: cmd, driver[32], version[32], fw_version[32], bus_info[32],
    // erom_version[32], reserved2[12], five u32 counts = 196 bytes.
    let mut buf = command(ETHTOOL_GDRVINFO, 196);
    sock.ethtool(iface, &mut buf)
        .map_err(|e| why("driver info", &e))?;
    Ok(DriverInfo {
        driver: c_string(&buf[4..36]),
        version: c_string(&buf[36..68]),
        firmware: c_string(&buf[68..100]),
        bus_info: c_string(&buf[100..132]),
    })
}

fn rings(sock: &Socket, iface: &str) -> Result<Rings, String> {
    // struct ethtool_ringparam: cmd, rx_max, rx_mini_max, rx_jumbo_max, tx_max, rx, rx_mini,
    // rx_jumbo, tx.
    let mut buf = command(ETHTOOL_GRINGPARAM, 9 * 4);
    sock.ethtool(iface, &mut buf)
        .map_err(|e| why("ring sizes", &e))?;
    Ok(Rings {
        rx_max: word(&buf, 1),
        tx_max: word(&buf, 4),
        rx: word(&buf, 5),
        tx: word(&buf, 8),
    })
}

fn channels(sock: &Socket, iface: &str) -> Result<Channels, String> {
    // struct ethtool_channels: cmd, max_rx, max_tx, max_other, max_combined, rx_count,
    // tx_count, other_count, combined_count.
    let mut buf = command(ETHTOOL_GCHANNELS, 9 * 4);
    sock.ethtool(iface, &mut buf)
        .map_err(|e| why("channel counts", &e))?;
    Ok(Channels {
        max_rx: word(&buf, 1),
        max_tx: word(&buf, 2),
        max_other: word(&buf, 3),
        max_combined: word(&buf, 4),
        rx: word(&buf, 5),
        tx: word(&buf, 6),
        other: word(&buf, 7),
        combined: word(&buf, 8),
    })
}

fn coalesce(sock: &Socket, iface: &str) -> Result<Coalesce, String> {
    // struct ethtool_coalesce: cmd then 22 u32 fields.
    let mut buf = command(ETHTOOL_GCOALESCE, 23 * 4);
    sock.ethtool(iface, &mut buf)
        .map_err(|e| why("interrupt coalescing", &e))?;
    Ok(Coalesce {
        rx_usecs: word(&buf, 1),
        rx_frames: word(&buf, 2),
        tx_usecs: word(&buf, 5),
        tx_frames: word(&buf, 6),
        adaptive_rx: word(&buf, 10) != 0,
        adaptive_tx: word(&buf, 11) != 0,
    })
}

/// The number of strings in a string set.
fn set_count(sock: &Socket, iface: &str, set: u32) -> io::Result<u32> {
    // struct ethtool_sset_info: cmd, reserved, u64 sset_mask, u32 data[].
    let mut buf = command(ETHTOOL_GSSET_INFO, 16 + 4);
    buf[8..16].copy_from_slice(&(1u64 << set).to_ne_bytes());
    sock.ethtool(iface, &mut buf)?;
    if u64_at(&buf, 8) & (1 << set) == 0 {
        return Ok(0);
    }
    let n = u32_at(&buf, 16);
    if n > MAX_STRINGS {
        return Err(io::Error::other(format!("implausible string count {n}")));
    }
    Ok(n)
}

fn strings(sock: &Socket, iface: &str, set: u32, count: u32) -> io::Result<Vec<String>> {
    // struct ethtool_gstrings: cmd, string_set, len, u8 data[len * 32].
    let mut buf = command(ETHTOOL_GSTRINGS, 12 + count as usize * ETH_GSTRING_LEN);
    put_u32(&mut buf, 1, set);
    put_u32(&mut buf, 2, count);
    sock.ethtool(iface, &mut buf)?;
    let len = u32_at(&buf, 8).min(count) as usize;
    Ok((0..len)
        .map(|i| c_string(&buf[12 + i * ETH_GSTRING_LEN..12 + (i + 1) * ETH_GSTRING_LEN]))
        .collect())
}

fn features(sock: &Socket, iface: &str) -> Result<BTreeMap<String, Feature>, String> {
    let what = "offload features";
    let count = set_count(sock, iface, ETH_SS_FEATURES).map_err(|e| why(what, &e))?;
    let names = strings(sock, iface, ETH_SS_FEATURES, count).map_err(|e| why(what, &e))?;
    let blocks = names.len().div_ceil(32);
    // struct ethtool_gfeatures: cmd, size, then `size` blocks of available, requested, active,
    // never_changed.
    let mut buf = command(ETHTOOL_GFEATURES, 8 + blocks * 16);
    put_u32(
        &mut buf,
        1,
        u32::try_from(blocks).map_err(|e| e.to_string())?,
    );
    sock.ethtool(iface, &mut buf).map_err(|e| why(what, &e))?;
    let mut map = BTreeMap::new();
    for (i, name) in names.into_iter().enumerate() {
        if name.is_empty() {
            continue;
        }
        let block = 8 + (i / 32) * 16;
        let bit = 1u32 << (i % 32);
        let available = u32_at(&buf, block);
        let active = u32_at(&buf, block + 8);
        let never_changed = u32_at(&buf, block + 12);
        map.insert(
            name,
            Feature {
                active: active & bit != 0,
                changeable: available & bit != 0 && never_changed & bit == 0,
            },
        );
    }
    Ok(map)
}

fn rss_indirection(sock: &Socket, iface: &str) -> Result<Vec<u32>, String> {
    let what = "the RSS indirection table";
    // struct ethtool_rxfh_indir: cmd, size, u32 ring_index[size]. Size 0 asks for the size.
    let mut buf = command(ETHTOOL_GRXFHINDIR, 8);
    sock.ethtool(iface, &mut buf).map_err(|e| why(what, &e))?;
    let size = word(&buf, 1);
    if size == 0 {
        return Ok(Vec::new());
    }
    if size > MAX_INDIR {
        return Err(format!("{what}: implausible size {size}"));
    }
    let mut buf = command(ETHTOOL_GRXFHINDIR, 8 + size as usize * 4);
    put_u32(&mut buf, 1, size);
    sock.ethtool(iface, &mut buf).map_err(|e| why(what, &e))?;
    Ok((0..size as usize).map(|i| word(&buf, 2 + i)).collect())
}

fn stats(sock: &Socket, iface: &str) -> Result<BTreeMap<String, u64>, String> {
    let what = "driver statistics";
    let count = set_count(sock, iface, ETH_SS_STATS).map_err(|e| why(what, &e))?;
    if count == 0 {
        return Ok(BTreeMap::new());
    }
    let names = strings(sock, iface, ETH_SS_STATS, count).map_err(|e| why(what, &e))?;
    // struct ethtool_stats: cmd, n_stats, u64 data[n_stats].
    let mut buf = command(ETHTOOL_GSTATS, 8 + names.len() * 8);
    put_u32(
        &mut buf,
        1,
        u32::try_from(names.len()).map_err(|e| e.to_string())?,
    );
    sock.ethtool(iface, &mut buf).map_err(|e| why(what, &e))?;
    let n = (u32_at(&buf, 4) as usize).min(names.len());
    Ok(names
        .into_iter()
        .take(n)
        .enumerate()
        .map(|(i, name)| (name, u64_at(&buf, 8 + i * 8)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_answers_features_and_refuses_rings() {
        let info = read_all("lo");
        let features = info.features.value().expect("lo has features");
        // Loopback always offloads checksums and cannot turn that off.
        assert!(features.contains_key("rx-gro"), "{features:?}");
        assert!(info.rings.reason().is_some());
        assert!(info.stats.value().is_some() || info.stats.reason().is_some());
    }

    #[test]
    fn bad_names_are_refused_not_sent() {
        let sock = Socket::open().unwrap();
        let mut buf = command(ETHTOOL_GDRVINFO, 196);
        assert!(
            sock.ethtool("a-very-long-interface-name", &mut buf)
                .is_err()
        );
        assert!(sock.ethtool("", &mut buf).is_err());
        let info = read_all("lr-no-such-if0");
        assert_eq!(
            info.driver.reason(),
            Some("no such interface in this network namespace")
        );
    }
}
