//! The live host's ethtool answers, read through linerate-sys's `SIOCETHTOOL` module; this
//! file turns them into the snapshot's types and each failure into a reason a reader can act
//! on.

use std::collections::BTreeMap;
use std::io;

use linerate_sys::ethtool::Ethtool;

use super::{Channels, Coalesce, DriverInfo, EthtoolInfo, Feature, Rings};
use crate::Probed;

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
    let e = match Ethtool::open() {
        Ok(e) => e,
        Err(err) => {
            return EthtoolInfo::unknown(&format!("cannot open a socket for ethtool: {err}"));
        }
    };
    EthtoolInfo {
        driver: e
            .driver_info(iface)
            .map(|d| DriverInfo {
                driver: d.driver,
                version: d.version,
                firmware: d.firmware,
                bus_info: d.bus_info,
            })
            .map_err(|err| why("driver info", &err))
            .into(),
        rings: e
            .rings(iface)
            .map(|r| Rings {
                rx: r.rx,
                rx_max: r.rx_max,
                tx: r.tx,
                tx_max: r.tx_max,
            })
            .map_err(|err| why("ring sizes", &err))
            .into(),
        channels: e
            .channels(iface)
            .map(|c| Channels {
                rx: c.rx,
                tx: c.tx,
                other: c.other,
                combined: c.combined,
                max_rx: c.max_rx,
                max_tx: c.max_tx,
                max_other: c.max_other,
                max_combined: c.max_combined,
            })
            .map_err(|err| why("channel counts", &err))
            .into(),
        coalesce: e
            .coalesce(iface)
            .map(|c| Coalesce {
                rx_usecs: c.rx_usecs,
                rx_frames: c.rx_frames,
                tx_usecs: c.tx_usecs,
                tx_frames: c.tx_frames,
                adaptive_rx: c.adaptive_rx,
                adaptive_tx: c.adaptive_tx,
            })
            .map_err(|err| why("interrupt coalescing", &err))
            .into(),
        features: e
            .features(iface)
            .map(|fs| {
                fs.into_iter()
                    .map(|f| {
                        let state = Feature {
                            active: f.active,
                            changeable: f.available && !f.never_changed,
                        };
                        (f.name, state)
                    })
                    .collect()
            })
            .map_err(|err| why("offload features", &err))
            .into(),
        rss_indirection: e
            .rss_indirection(iface)
            .map_err(|err| why("the RSS indirection table", &err))
            .into(),
        stats: stats(&e, iface).into(),
    }
}

fn stats(e: &Ethtool, iface: &str) -> Result<BTreeMap<String, u64>, String> {
    e.stats(iface)
        .map(|s| s.into_iter().collect())
        .map_err(|err| why("driver statistics", &err))
}

/// Reads only the driver statistics.
pub(super) fn read_stats(iface: &str) -> Probed<BTreeMap<String, u64>> {
    match Ethtool::open() {
        Ok(e) => stats(&e, iface).into(),
        Err(err) => Probed::unknown(format!("cannot open a socket for ethtool: {err}")),
    }
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
        for bad in ["a-very-long-interface-name", ""] {
            let info = read_all(bad);
            assert!(
                info.driver
                    .reason()
                    .is_some_and(|r| r.contains("not a valid interface name")),
                "{:?}",
                info.driver
            );
        }
        let info = read_all("lr-no-such-if0");
        assert_eq!(
            info.driver.reason(),
            Some("no such interface in this network namespace")
        );
    }
}
