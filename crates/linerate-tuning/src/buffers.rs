//! The one answer to "how large should the Linux TCP buffers be for this path?".
//!
//! `calc bdp`, `tune` and `lint` all call [`linux`], so they print the same numbers for the
//! same reason: what one printed, the others accept. The answer is a formula of the bandwidth-
//! delay product, the target kernel's defaults (from the catalogue, per version), the largest
//! window TCP can advertise and the memory TCP may use on the host.
//!
//! - **What a connection needs** ([`BufferAdvice::need`]): 2 × BDP. About half of a Linux
//!   receive buffer carries window (`tcp_adv_win_scale` up to 6.5, the per-flow
//!   `scaling_ratio` from 6.6), and a sender keeps every unacknowledged byte plus the same skb
//!   overhead, so both directions take 2 × BDP. Capped at 1 GiB (window scale 14: one
//!   connection cannot use more) and, when the RAM is known, at the most memory the kernel
//!   lets TCP take (`tcp_mem` max, computed from RAM as Linux does at boot).
//! - **What to set**: the need rounded up to a power of two (within the same caps), but never
//!   below the kernel's default; when the default maximum already covers the need, nothing is
//!   set ("the default already covers this path").
//! - **`net.core.rmem_max`/`wmem_max`** cap what applications request with `SO_RCVBUF` /
//!   `SO_SNDBUF` (iperf3 `-w`); they follow the TCP maximum when the need exceeds their default.

use linerate_units::{BitRate, ByteSize, Duration};

use crate::catalogue::{CatalogueError, catalogue};
use crate::formula::{self, MAX_WINDOW};
use crate::os::{Os, Version};
use crate::value::Value;
use crate::wording::bytes;

/// The path and host the buffers are sized for.
#[derive(Debug, Clone, PartialEq)]
pub struct BufferInput {
    /// Bottleneck rate.
    pub rate: BitRate,
    /// Round-trip time.
    pub rtt: Duration,
    /// The Linux version whose defaults apply.
    pub version: Version,
    /// The host's memory, when known (caps the buffers at what TCP may take).
    pub ram: Option<ByteSize>,
    /// The memory page size (`tcp_mem` is in pages).
    pub page_size: ByteSize,
}

/// Why the need is less than 2 × BDP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "limit")]
pub enum Cap {
    /// One connection cannot use more than the largest window (65535 × 2^14 ≈ 1 GiB).
    WindowScale,
    /// The kernel lets TCP take at most this much memory on this host (`tcp_mem` max).
    Ram {
        /// `tcp_mem` max in bytes.
        tcp_mem_max: u64,
    },
}

/// What to do with one key.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KeyAdvice {
    /// The sysctl.
    pub key: &'static str,
    /// The kernel's default on the target version.
    pub default: String,
    /// The value to set (the default when nothing needs to change).
    pub value: String,
    /// Whether the value differs from the default (what a profile writes).
    pub change: bool,
    /// Why, in words (the formula, or why the default is enough).
    pub reason: String,
}

/// The buffer sizes for a path on a Linux version.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BufferAdvice {
    /// The Linux version the defaults are from.
    pub version: String,
    /// Bandwidth-delay product.
    pub bdp: ByteSize,
    /// The smallest buffer maximum that lets one connection fill the path: 2 × BDP, within
    /// [`BufferAdvice::cap`].
    pub need: u64,
    /// What held the need below 2 × BDP, if anything.
    pub cap: Option<Cap>,
    /// `net.ipv4.tcp_rmem`, `net.ipv4.tcp_wmem`, `net.core.rmem_max`, `net.core.wmem_max`.
    pub keys: Vec<KeyAdvice>,
}

impl BufferAdvice {
    /// The advice for one key.
    #[must_use]
    pub fn key(&self, key: &str) -> Option<&KeyAdvice> {
        self.keys.iter().find(|k| k.key == key)
    }

    /// The keys to set (those whose default does not cover the path).
    pub fn changes(&self) -> impl Iterator<Item = &KeyAdvice> {
        self.keys.iter().filter(|k| k.change)
    }

    /// The buffer maximum to set (the TCP maximum that [`Self::keys`] carry).
    #[must_use]
    pub fn max(&self, key: &str) -> Option<u64> {
        let advice = self.key(key)?;
        advice.value.split_whitespace().last()?.parse().ok()
    }
}

/// The largest power of two at most `n` (0 for 0).
fn prev_pow2(n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        1 << (63 - n.leading_zeros())
    }
}

/// The Linux buffer advice for `input` (see the module docs for the formula).
pub fn linux(input: &BufferInput) -> Result<BufferAdvice, CatalogueError> {
    let cat = catalogue(Os::Linux)?;
    let default_of = |key: &str| -> (String, Vec<i64>) {
        let text = cat
            .get(key)
            .and_then(|k| Some((k.ty, k.default_on(&input.version)?)))
            .map(|(ty, d)| (d.to_owned(), Value::parse(ty, d).ok()));
        match text {
            Some((d, Some(v))) => (d, v.numbers()),
            Some((d, None)) => (d, Vec::new()),
            None => (String::new(), Vec::new()),
        }
    };
    let bdp = input.rate.bytes_in(input.rtt.as_secs_f64());
    let want = bdp.bytes().saturating_mul(2);
    let ram_cap = input.ram.map(|ram| {
        let pages = formula::linux_tcp_mem_auto(ram, input.page_size)[2];
        pages.saturating_mul(input.page_size.bytes())
    });
    let mut need = want;
    let mut cap = None;
    if need > MAX_WINDOW {
        need = MAX_WINDOW;
        cap = Some(Cap::WindowScale);
    }
    if let Some(limit) = ram_cap.filter(|&l| need > l) {
        need = limit;
        cap = Some(Cap::Ram { tcp_mem_max: limit });
    }
    // A power of two, as config files hold them, within the same limits.
    let ceiling = ram_cap.map_or(MAX_WINDOW, |l| prev_pow2(l).min(MAX_WINDOW));
    let target = formula::next_pow2(need).min(ceiling).max(need);
    let bdp_txt = bytes(bdp.bytes());
    let cap_txt = match cap {
        None => String::new(),
        Some(Cap::WindowScale) => format!(
            "; capped at {} (window scale 14: one connection cannot use more)",
            bytes(MAX_WINDOW)
        ),
        Some(Cap::Ram { tcp_mem_max }) => format!(
            "; capped at {} (tcp_mem max for {} of RAM: TCP may not take more)",
            bytes(tcp_mem_max),
            bytes(input.ram.map_or(0, |r| r.bytes()))
        ),
    };
    let mut keys = Vec::new();
    for (key, why) in [
        (
            "net.ipv4.tcp_rmem",
            "about half of a Linux receive buffer carries window",
        ),
        (
            "net.ipv4.tcp_wmem",
            "one BDP unacknowledged in flight, plus the same skb overhead",
        ),
    ] {
        let (default, d) = default_of(key);
        let advice = match d[..] {
            [min, def, max] => {
                let max = u64::try_from(max).unwrap_or(0);
                if max >= need {
                    KeyAdvice {
                        key,
                        value: default.clone(),
                        default,
                        change: false,
                        reason: format!(
                            "the default already covers this path: max {} ≥ 2 × BDP = 2 × {bdp_txt} ({why}){cap_txt}",
                            bytes(max)
                        ),
                    }
                } else {
                    KeyAdvice {
                        key,
                        value: format!("{min} {def} {target}"),
                        default,
                        change: true,
                        reason: format!(
                            "max = 2 × BDP = 2 × {bdp_txt} ({why}){}, above the linux {} default {}",
                            if cap.is_some() {
                                cap_txt.clone()
                            } else {
                                format!(" → next power of two {}", bytes(target))
                            },
                            input.version,
                            bytes(max)
                        ),
                    }
                }
            }
            _ => continue,
        };
        keys.push(advice);
    }
    for (key, tcp, what) in [
        (
            "net.core.rmem_max",
            "net.ipv4.tcp_rmem",
            "SO_RCVBUF (iperf3 -w)",
        ),
        ("net.core.wmem_max", "net.ipv4.tcp_wmem", "SO_SNDBUF"),
    ] {
        let (default, d) = default_of(key);
        let Some(&core) = d.first() else { continue };
        let core = u64::try_from(core).unwrap_or(0);
        let tcp_max = keys
            .iter()
            .find(|k| k.key == tcp)
            .and_then(|k| k.value.split_whitespace().last()?.parse::<u64>().ok())
            .unwrap_or(target);
        keys.push(if core >= need {
            KeyAdvice {
                key,
                value: default.clone(),
                default,
                change: false,
                reason: format!(
                    "the default already covers this path: {} ≥ 2 × BDP for applications that set {what}",
                    bytes(core)
                ),
            }
        } else {
            KeyAdvice {
                key,
                value: tcp_max.max(core).to_string(),
                default,
                change: true,
                reason: format!(
                    "= {tcp} max, so applications that set {what} reach the same window (the default {} is below 2 × BDP)",
                    bytes(core)
                ),
            }
        });
    }
    Ok(BufferAdvice {
        version: input.version.to_string(),
        bdp,
        need,
        cap,
        keys,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn advice(rate: BitRate, rtt_ms: u64, version: &[u32], ram: Option<ByteSize>) -> BufferAdvice {
        linux(&BufferInput {
            rate,
            rtt: Duration::from_millis(rtt_ms),
            version: Version::new(version),
            ram,
            page_size: ByteSize::from_kib(4),
        })
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_path_the_default_covers_changes_nothing() {
        // 100 Mbit/s × 10 ms: BDP 125 kB, need 250 kB; 6.18 allows 32 MiB / 4 MiB.
        let a = advice(BitRate::from_mbps(100), 10, &[6, 18], None);
        assert_eq!(a.need, 250_000);
        assert_eq!(a.changes().count(), 0, "{a:#?}");
        let rmem = a.key("net.ipv4.tcp_rmem").map(|k| k.reason.as_str());
        assert!(rmem.is_some_and(|r| r.starts_with("the default already covers this path")));
        // On 5.15 the core maxima (208 KiB) are below it: they follow the TCP maxima.
        let old = advice(BitRate::from_mbps(100), 10, &[5, 15], None);
        let changed: Vec<&str> = old.changes().map(|k| k.key).collect();
        assert_eq!(changed, ["net.core.rmem_max", "net.core.wmem_max"]);
        assert_eq!(
            old.key("net.core.rmem_max").map(|k| k.value.as_str()),
            Some("6291456")
        );
    }

    #[test]
    fn one_gigabit_at_80_ms() {
        // BDP 10 MB, need 20 MB → 32 MiB: the 6.18 rmem default covers it, wmem (4 MiB) not.
        let a = advice(BitRate::from_gbps(1), 80, &[6, 18], None);
        assert_eq!(a.need, 20_000_000);
        let rmem = a.key("net.ipv4.tcp_rmem").unwrap();
        assert!(!rmem.change);
        let wmem = a.key("net.ipv4.tcp_wmem").unwrap();
        assert_eq!(wmem.value, "4096 16384 33554432");
        assert_eq!(
            a.key("net.core.rmem_max").map(|k| k.value.as_str()),
            Some("33554432")
        );
        assert_eq!(a.max("net.ipv4.tcp_wmem"), Some(33_554_432));
        // On 5.15 rmem (6 MiB) is below the need too.
        let old = advice(BitRate::from_gbps(1), 80, &[5, 15], None);
        assert_eq!(
            old.key("net.ipv4.tcp_rmem").map(|k| k.value.as_str()),
            Some("4096 131072 33554432")
        );
    }

    #[test]
    fn the_window_scale_and_the_ram_cap_the_need() {
        // 40 Gbit/s × 200 ms: 2 × BDP = 2 GB > 1 GiB.
        let a = advice(BitRate::from_gbps(40), 200, &[6, 18], None);
        assert_eq!(a.need, MAX_WINDOW);
        assert_eq!(a.cap, Some(Cap::WindowScale));
        assert_eq!(a.max("net.ipv4.tcp_rmem"), Some(MAX_WINDOW));
        // 1 GiB of RAM: tcp_mem max = 3/2 × 3/4 × RAM/16 pages ≈ 72 MiB; a 1 GiB buffer
        // cannot be had, the need stops there and the power of two below it is set.
        let small = advice(
            BitRate::from_gbps(10),
            100,
            &[6, 18],
            Some(ByteSize::from_gib(1)),
        );
        let Some(Cap::Ram { tcp_mem_max }) = small.cap else {
            panic!("{small:#?}")
        };
        assert_eq!(small.need, tcp_mem_max);
        let max = small.max("net.ipv4.tcp_wmem").unwrap_or(0);
        assert!(max >= small.need && max <= MAX_WINDOW, "{small:#?}");
    }

    #[test]
    fn every_set_maximum_covers_the_need() {
        for rate in [100, 1_000, 10_000, 40_000].map(BitRate::from_mbps) {
            for rtt in [1, 10, 80, 200] {
                for version in [[5, 15], [6, 18]] {
                    let a = advice(rate, rtt, &version, None);
                    for key in ["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"] {
                        let max = a.max(key).unwrap_or(0);
                        assert!(max >= a.need, "{rate} {rtt} {version:?} {key}: {a:#?}");
                    }
                }
            }
        }
    }
}
