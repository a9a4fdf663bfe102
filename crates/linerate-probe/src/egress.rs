//! The interface a test leaves by, and whether its speed is a path's rate: the interface that
//! holds the test's local address (`rtnetlink` on Linux), judged from the host's snapshot. A
//! physical NIC's negotiated speed is a line rate; a virtual interface's (veth's nominal
//! 10 Gbit/s, loopback, a tunnel, a bridge) is not, and is said so rather than used.

use std::net::IpAddr;

use linerate_units::BitRate;

use crate::{HostSnapshot, Interface};

/// Kinds whose speed is a wire's.
const PHYSICAL: &[&str] = &["pci", "virtio", "usb", "platform"];

/// What the egress interface says about the path's rate.
#[derive(Debug, Clone, PartialEq)]
pub enum Egress {
    /// A physical NIC with its negotiated speed.
    Speed {
        /// The interface.
        name: String,
        /// Its speed.
        rate: BitRate,
    },
    /// The interface has no line rate to give (why, with its name).
    NoRate(String),
}

/// The egress interface for `local` (the test's local address) among the snapshot's
/// interfaces; `None` when the address is on no interface that can be read (not Linux, or
/// netlink refused).
pub fn for_address(snapshot: &HostSnapshot, local: IpAddr) -> Option<Egress> {
    let index = index_of(local)?;
    let interfaces = snapshot.interfaces.value()?;
    Some(judge(interfaces, index))
}

/// The egress judgment for interface `index`.
pub fn judge(interfaces: &[Interface], index: u32) -> Egress {
    let Some(i) = interfaces
        .iter()
        .find(|i| i.ifindex.value() == Some(&index))
    else {
        return Egress::NoRate(format!("interface {index} is not in the host's snapshot"));
    };
    rate_of(&i.name, &i.kind, i.speed.value().copied())
}

/// An interface's speed as a path's rate: only a physical NIC's.
fn rate_of(name: &str, kind: &str, speed: Option<BitRate>) -> Egress {
    if !PHYSICAL.contains(&kind) {
        return Egress::NoRate(format!(
            "{name} is a {kind} interface: its speed is nominal, not a line rate"
        ));
    }
    match speed {
        Some(rate) if rate > BitRate::ZERO => Egress::Speed {
            name: name.to_owned(),
            rate,
        },
        _ => Egress::NoRate(format!("{name} reports no link speed")),
    }
}

#[cfg(target_os = "linux")]
fn index_of(local: IpAddr) -> Option<u32> {
    let mut rtnl = linerate_sys::netlink::Rtnl::open().ok()?;
    let addresses = rtnl.addresses().ok()?;
    addresses
        .iter()
        .find(|a| a.address == local)
        .map(|a| a.index)
}

#[cfg(not(target_os = "linux"))]
fn index_of(_local: IpAddr) -> Option<u32> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nic_s_speed_is_a_rate_and_a_veth_s_is_not() {
        let ten = Some(BitRate::from_bps_f64(10e9));
        assert_eq!(
            rate_of("eth0", "pci", ten),
            Egress::Speed {
                name: "eth0".into(),
                rate: BitRate::from_bps_f64(10e9)
            }
        );
        assert!(
            matches!(rate_of("veth1", "veth", ten), Egress::NoRate(w) if w.contains("veth1 is a veth"))
        );
        assert!(
            matches!(rate_of("eth1", "pci", None), Egress::NoRate(w) if w.contains("no link speed"))
        );
        assert!(matches!(judge(&[], 9), Egress::NoRate(_)));
    }
}
