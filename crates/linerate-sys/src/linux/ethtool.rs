//! The `SIOCETHTOOL` ioctl, reading and setting: each command is one command word followed by
//! its structure, laid out as in `<linux/ethtool.h>`. Buffers are plain byte vectors sized here
//! for each command (the kernel writes as much as the command word says, so a caller must never
//! choose the size) and decoded with `from_ne_bytes`; the ioctl is the one unsafe call.
//!
//! Why the ioctl and not ethtool netlink: the maintained Rust netlink crate for it (`ethtool`)
//! is async-only and has no driver info, string sets or statistics, so the ioctl would still be
//! needed for those; the ioctl answers everything here synchronously in one syscall per query,
//! and every kernel that has ethtool netlink still serves it.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const SIOCETHTOOL: libc::c_ulong = 0x8946;
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

/// Extra entries allocated for string sets and statistics. The kernel answers GSTRINGS and
/// GSTATS with the count current *at that call*, ignoring the count we pass, so a driver whose
/// count grows between our two ioctls (channels reconfigured meanwhile) would write past a
/// buffer sized exactly; every queue adds a handful of statistics, so this covers going from
/// one queue to hundreds.
const HEADROOM: usize = 4096;

/// Driver identity (`ethtool -i`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverInfo {
    /// Driver name.
    pub driver: String,
    /// Driver version.
    pub version: String,
    /// Firmware version (empty when none).
    pub firmware: String,
    /// Bus address (empty for virtual devices).
    pub bus_info: String,
}

/// Ring sizes (`ethtool -g`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rings {
    /// Current RX descriptors.
    pub rx: u32,
    /// Maximum RX descriptors.
    pub rx_max: u32,
    /// Current TX descriptors.
    pub tx: u32,
    /// Maximum TX descriptors.
    pub tx_max: u32,
}

/// Channel counts (`ethtool -l`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Channels {
    /// RX-only channels.
    pub rx: u32,
    /// TX-only channels.
    pub tx: u32,
    /// Other channels.
    pub other: u32,
    /// Combined channels.
    pub combined: u32,
    /// Maximum RX-only channels.
    pub max_rx: u32,
    /// Maximum TX-only channels.
    pub max_tx: u32,
    /// Maximum other channels.
    pub max_other: u32,
    /// Maximum combined channels.
    pub max_combined: u32,
}

/// Interrupt coalescing (`ethtool -c`), the commonly tuned part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coalesce {
    /// rx-usecs.
    pub rx_usecs: u32,
    /// rx-frames.
    pub rx_frames: u32,
    /// tx-usecs.
    pub tx_usecs: u32,
    /// tx-frames.
    pub tx_frames: u32,
    /// Adaptive RX.
    pub adaptive_rx: bool,
    /// Adaptive TX.
    pub adaptive_tx: bool,
}

/// One offload feature (`ethtool -k`), as the kernel's four bit sets say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Feature {
    /// Its name (`rx-gro`, `tx-checksum-ipv4`, …).
    pub name: String,
    /// The driver can switch it.
    pub available: bool,
    /// On now.
    pub active: bool,
    /// Fixed by the kernel or driver, whatever `available` says.
    pub never_changed: bool,
}

/// An offload to switch with [`Ethtool::set_offload`] (the legacy one-value commands).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offload {
    /// Transmit checksumming (`ETHTOOL_STXCSUM`).
    TxChecksum,
    /// Scatter-gather (`ETHTOOL_SSG`).
    ScatterGather,
    /// TCP segmentation offload (`ETHTOOL_STSO`).
    Tso,
    /// Generic segmentation offload (`ETHTOOL_SGSO`).
    Gso,
    /// Generic receive offload (`ETHTOOL_SGRO`).
    Gro,
}

impl Offload {
    fn set_command(self) -> u32 {
        match self {
            Offload::TxChecksum => 0x17,
            Offload::ScatterGather => 0x19,
            Offload::Tso => 0x1f,
            Offload::Gso => 0x24,
            Offload::Gro => 0x2c,
        }
    }
}

/// A socket to address ethtool ioctls to, in the network namespace of the thread that opened
/// it (any socket works; an `AF_INET` datagram socket always exists).
#[derive(Debug)]
pub struct Ethtool(OwnedFd);

impl Ethtool {
    /// Opens the socket in the calling thread's namespace.
    #[expect(unsafe_code)]
    pub fn open() -> io::Result<Ethtool> {
        for family in [libc::AF_INET, libc::AF_UNIX] {
            // SAFETY: socket(2) takes plain integers.
            let fd = unsafe { libc::socket(family, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
            if fd >= 0 {
                // SAFETY: fd was just returned by socket(2) and nothing else owns it.
                return Ok(Ethtool(unsafe { OwnedFd::from_raw_fd(fd) }));
            }
        }
        Err(io::Error::last_os_error())
    }

    /// Runs one ethtool command whose structure (command word first) is `cmd.buf`.
    #[expect(unsafe_code)]
    fn run(&self, iface: &str, cmd: &mut Command) -> io::Result<()> {
        let name = iface_name(iface)?;
        let mut req = IfReq {
            name,
            data: cmd.buf.as_mut_ptr().cast(),
            _pad: [0; 16],
        };
        // SAFETY: `req` is a valid `struct ifreq` whose name is NUL-terminated and whose data
        // pointer points at `cmd.buf`; both outlive the call. Each method sizes `cmd.buf` for
        // the structure its command word selects (<linux/ethtool.h>): fixed structures
        // exactly; GFEATURES and GRXFHINDIR for the count written into the buffer, which the
        // kernel honours (it copies at most that many blocks, or refuses another size);
        // GSTRINGS and GSTATS, where the kernel writes its own current count, with HEADROOM
        // beyond the count it reported just before.
        let rc = unsafe { libc::ioctl(self.0.as_raw_fd(), SIOCETHTOOL as _, &raw mut req) };
        if rc < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// Driver identity.
    pub fn driver_info(&self, iface: &str) -> io::Result<DriverInfo> {
        // struct ethtool_drvinfo: cmd, driver[32], version[32], fw_version[32], bus_info[32],
        // erom_version[32], reserved2[12], five u32 counts = 196 bytes.
        let mut c = Command::new(ETHTOOL_GDRVINFO, 196);
        self.run(iface, &mut c)?;
        Ok(DriverInfo {
            driver: c_string(&c.buf[4..36]),
            version: c_string(&c.buf[36..68]),
            firmware: c_string(&c.buf[68..100]),
            bus_info: c_string(&c.buf[100..132]),
        })
    }

    /// Ring sizes.
    pub fn rings(&self, iface: &str) -> io::Result<Rings> {
        // struct ethtool_ringparam: cmd, rx_max, rx_mini_max, rx_jumbo_max, tx_max, rx,
        // rx_mini, rx_jumbo, tx.
        let mut c = Command::new(ETHTOOL_GRINGPARAM, 9 * 4);
        self.run(iface, &mut c)?;
        Ok(Rings {
            rx_max: c.word(1),
            tx_max: c.word(4),
            rx: c.word(5),
            tx: c.word(8),
        })
    }

    /// Channel counts.
    pub fn channels(&self, iface: &str) -> io::Result<Channels> {
        // struct ethtool_channels: cmd, max_rx, max_tx, max_other, max_combined, rx_count,
        // tx_count, other_count, combined_count.
        let mut c = Command::new(ETHTOOL_GCHANNELS, 9 * 4);
        self.run(iface, &mut c)?;
        Ok(Channels {
            max_rx: c.word(1),
            max_tx: c.word(2),
            max_other: c.word(3),
            max_combined: c.word(4),
            rx: c.word(5),
            tx: c.word(6),
            other: c.word(7),
            combined: c.word(8),
        })
    }

    /// Interrupt coalescing.
    pub fn coalesce(&self, iface: &str) -> io::Result<Coalesce> {
        // struct ethtool_coalesce: cmd then 22 u32 fields.
        let mut c = Command::new(ETHTOOL_GCOALESCE, 23 * 4);
        self.run(iface, &mut c)?;
        Ok(Coalesce {
            rx_usecs: c.word(1),
            rx_frames: c.word(2),
            tx_usecs: c.word(5),
            tx_frames: c.word(6),
            adaptive_rx: c.word(10) != 0,
            adaptive_tx: c.word(11) != 0,
        })
    }

    /// The number of strings in string set `set`.
    fn set_count(&self, iface: &str, set: u32) -> io::Result<u32> {
        // struct ethtool_sset_info: cmd, reserved, u64 sset_mask, u32 data[].
        let mut c = Command::new(ETHTOOL_GSSET_INFO, 16 + 4);
        c.buf[8..16].copy_from_slice(&(1u64 << set).to_ne_bytes());
        self.run(iface, &mut c)?;
        if c.u64_at(8) & (1 << set) == 0 {
            return Ok(0);
        }
        let n = c.u32_at(16);
        if n > MAX_STRINGS {
            return Err(io::Error::other(format!("implausible string count {n}")));
        }
        Ok(n)
    }

    fn strings(&self, iface: &str, set: u32, count: u32) -> io::Result<Vec<String>> {
        // struct ethtool_gstrings: cmd, string_set, len, u8 data[len * 32].
        let room = count as usize + HEADROOM;
        let mut c = Command::new(ETHTOOL_GSTRINGS, 12 + room * ETH_GSTRING_LEN);
        c.put_word(1, set);
        c.put_word(2, count);
        self.run(iface, &mut c)?;
        let len = (c.u32_at(8) as usize).min(room);
        Ok((0..len)
            .map(|i| c_string(&c.buf[12 + i * ETH_GSTRING_LEN..12 + (i + 1) * ETH_GSTRING_LEN]))
            .collect())
    }

    /// Every named offload feature and its state.
    pub fn features(&self, iface: &str) -> io::Result<Vec<Feature>> {
        let count = self.set_count(iface, ETH_SS_FEATURES)?;
        let names = self.strings(iface, ETH_SS_FEATURES, count)?;
        let blocks = names.len().div_ceil(32);
        // struct ethtool_gfeatures: cmd, size, then `size` blocks of available, requested,
        // active, never_changed.
        let mut c = Command::new(ETHTOOL_GFEATURES, 8 + blocks * 16);
        c.put_word(1, u32::try_from(blocks).map_err(io::Error::other)?);
        self.run(iface, &mut c)?;
        Ok(names
            .into_iter()
            .enumerate()
            .filter(|(_, name)| !name.is_empty())
            .map(|(i, name)| {
                let block = 8 + (i / 32) * 16;
                let bit = 1u32 << (i % 32);
                Feature {
                    name,
                    available: c.u32_at(block) & bit != 0,
                    active: c.u32_at(block + 8) & bit != 0,
                    never_changed: c.u32_at(block + 12) & bit != 0,
                }
            })
            .collect())
    }

    /// The RSS indirection table (empty when the driver has none).
    pub fn rss_indirection(&self, iface: &str) -> io::Result<Vec<u32>> {
        // struct ethtool_rxfh_indir: cmd, size, u32 ring_index[size]. Size 0 asks for the size.
        let mut c = Command::new(ETHTOOL_GRXFHINDIR, 8);
        self.run(iface, &mut c)?;
        let size = c.word(1);
        if size == 0 {
            return Ok(Vec::new());
        }
        if size > MAX_INDIR {
            return Err(io::Error::other(format!("implausible size {size}")));
        }
        let mut c = Command::new(ETHTOOL_GRXFHINDIR, 8 + size as usize * 4);
        c.put_word(1, size);
        self.run(iface, &mut c)?;
        Ok((0..size as usize).map(|i| c.word(2 + i)).collect())
    }

    /// The driver's statistics (`ethtool -S`), in the driver's order.
    pub fn stats(&self, iface: &str) -> io::Result<Vec<(String, u64)>> {
        let count = self.set_count(iface, ETH_SS_STATS)?;
        if count == 0 {
            return Ok(Vec::new());
        }
        let names = self.strings(iface, ETH_SS_STATS, count)?;
        // struct ethtool_stats: cmd, n_stats, u64 data[n_stats]; room as for the names.
        let mut c = Command::new(ETHTOOL_GSTATS, 8 + (names.len() + HEADROOM) * 8);
        c.put_word(1, u32::try_from(names.len()).map_err(io::Error::other)?);
        self.run(iface, &mut c)?;
        let n = (c.u32_at(4) as usize).min(names.len());
        Ok(names
            .into_iter()
            .take(n)
            .enumerate()
            .map(|(i, name)| (name, c.u64_at(8 + i * 8)))
            .collect())
    }

    /// Switches `offload` on or off.
    pub fn set_offload(&self, iface: &str, offload: Offload, on: bool) -> io::Result<()> {
        // struct ethtool_value: cmd, data.
        let mut c = Command::new(offload.set_command(), 8);
        c.put_word(1, u32::from(on));
        self.run(iface, &mut c)
    }
}

/// `struct ifreq` with the `ifr_data` member of its union.
#[repr(C)]
struct IfReq {
    name: [u8; IFNAMSIZ],
    data: *mut libc::c_void,
    _pad: [u8; 16],
}

/// An interface name as `struct ifreq` holds it, refused when it could not be one.
fn iface_name(iface: &str) -> io::Result<[u8; IFNAMSIZ]> {
    let bytes = iface.as_bytes();
    if bytes.is_empty() || bytes.len() >= IFNAMSIZ || bytes.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{iface:?} is not a valid interface name"),
        ));
    }
    let mut name = [0u8; IFNAMSIZ];
    name[..bytes.len()].copy_from_slice(bytes);
    Ok(name)
}

/// One command's structure: the command word, then the fields.
struct Command {
    buf: Vec<u8>,
}

impl Command {
    fn new(cmd: u32, len: usize) -> Command {
        let mut buf = vec![0u8; len.max(8)];
        buf[..4].copy_from_slice(&cmd.to_ne_bytes());
        Command { buf }
    }

    fn put_word(&mut self, word: usize, v: u32) {
        self.buf[word * 4..word * 4 + 4].copy_from_slice(&v.to_ne_bytes());
    }

    fn u32_at(&self, offset: usize) -> u32 {
        let mut b = [0u8; 4];
        if let Some(s) = self.buf.get(offset..offset + 4) {
            b.copy_from_slice(s);
        }
        u32::from_ne_bytes(b)
    }

    fn word(&self, index: usize) -> u32 {
        self.u32_at(index * 4)
    }

    fn u64_at(&self, offset: usize) -> u64 {
        let mut b = [0u8; 8];
        if let Some(s) = self.buf.get(offset..offset + 8) {
            b.copy_from_slice(s);
        }
        u64::from_ne_bytes(b)
    }
}

fn c_string(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netlink::Rtnl;
    use crate::netns;

    #[test]
    fn loopback_answers_features_and_refuses_rings() {
        let e = Ethtool::open().unwrap();
        let features = e.features("lo").unwrap();
        assert!(features.iter().any(|f| f.name == "rx-gro"), "{features:?}");
        // Loopback's checksumming is fixed on: active, and not a bit the driver can switch.
        let tx_csum = features
            .iter()
            .find(|f| f.name == "tx-checksum-ip-generic")
            .unwrap();
        assert!(tx_csum.active && !tx_csum.available, "{tx_csum:?}");
        assert!(e.rings("lo").is_err());
        assert_eq!(
            e.driver_info("lo").map(|d| d.bus_info).unwrap_or_default(),
            ""
        );
    }

    #[test]
    fn bad_names_are_refused_before_the_kernel_sees_them() {
        let e = Ethtool::open().unwrap();
        for bad in ["", "a-very-long-interface-name", "a\0b"] {
            let err = e.driver_info(bad).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{bad:?}");
        }
        let err = e.driver_info("lr-no-such-if0").unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENODEV));
    }

    #[test]
    fn a_veth_pair_reads_and_switches_offloads() {
        if !crate::is_root() {
            eprintln!("SKIP: namespaces need root");
            return;
        }
        let name = format!("lr-sys-{}-eth", std::process::id());
        let ns = netns::TempNamed::create(&name).unwrap();
        let result = netns::run_in(ns.fd(), || -> io::Result<()> {
            let mut route = Rtnl::open().map_err(io::Error::other)?;
            let here = std::fs::File::open("/proc/thread-self/ns/net")?;
            let end = |name| crate::netlink::VethEnd {
                name,
                netns: std::os::fd::AsFd::as_fd(&here),
                mtu: 1500,
                mac: [0x02, 0, 0, 0, 0, if name == "lrs0" { 1 } else { 2 }],
            };
            route
                .create_veth(&end("lrs0"), &end("lrs1"))
                .map_err(io::Error::other)?;
            let e = Ethtool::open()?;
            assert_eq!(e.driver_info("lrs0")?.driver, "veth");
            let channels = e.channels("lrs0")?;
            assert!(channels.rx >= 1 || channels.combined >= 1, "{channels:?}");
            let stats = e.stats("lrs0")?;
            assert!(stats.iter().any(|(n, _)| n == "peer_ifindex"), "{stats:?}");
            let gro = |e: &Ethtool| -> io::Result<bool> {
                Ok(e.features("lrs0")?
                    .into_iter()
                    .find(|f| f.name == "rx-gro")
                    .is_some_and(|f| f.active))
            };
            e.set_offload("lrs0", Offload::Gro, true)?;
            assert!(gro(&e)?);
            e.set_offload("lrs0", Offload::Gro, false)?;
            assert!(!gro(&e)?);
            for off in [
                Offload::Gso,
                Offload::Tso,
                Offload::ScatterGather,
                Offload::TxChecksum,
            ] {
                e.set_offload("lrs0", off, false)?;
            }
            let tx_csum = e
                .features("lrs0")?
                .into_iter()
                .find(|f| f.name == "tx-checksum-ip-generic");
            assert!(tx_csum.is_some_and(|f| !f.active));
            Ok(())
        });
        result.unwrap().unwrap();
    }
}
