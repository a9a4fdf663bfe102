//! Tunnel and encapsulation overhead: the MTU left inside a stack of encapsulations, the TCP
//! MSS that fits it, and how much of the wire carries payload.
//!
//! Each encapsulation's bytes are listed part by part ([`Encap::parts`]) with the assumed
//! configuration ([`Encap::assumes`]); `linerate calc tunnel --list` prints them.

use linerate_units::{BitRate, ByteSize, Percent};

mod encap;

pub use encap::{Encap, EncapParseError, EncapSpec, HeaderPart, IpVersion, List, ListEntry, list};

use crate::ethernet::{L1_OVERHEAD, L2_OVERHEAD};

/// One layer of a stack, resolved.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Layer {
    /// The encapsulation.
    pub encap: Encap,
    /// Its outer IP version, when it has an outer IP header.
    pub outer: Option<IpVersion>,
    /// Headers it adds.
    pub parts: Vec<HeaderPart>,
    /// Bytes it takes from a full-size packet (headers plus padding; 0 for a VLAN tag, which
    /// grows the frame instead).
    pub overhead: ByteSize,
    /// MTU available outside it.
    pub mtu_outside: ByteSize,
    /// MTU left inside it.
    pub mtu_inside: ByteSize,
}

/// What `calc tunnel` computes.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TunnelReport {
    /// MTU of the underlying link (the Ethernet payload size).
    pub link_mtu: ByteSize,
    /// Layers, outermost first.
    pub layers: Vec<Layer>,
    /// IP version inside the innermost tunnel.
    pub inner: IpVersion,
    /// MTU inside the stack.
    pub inner_mtu: ByteSize,
    /// Bytes the stack takes from the MTU.
    pub overhead: ByteSize,
    /// TCP MSS that fits: inner MTU minus inner IP and TCP headers (what to clamp to).
    pub tcp_mss: ByteSize,
    /// TCP payload per full-size segment with timestamps on (MSS − 12).
    pub tcp_payload: ByteSize,
    /// inner MTU ÷ link MTU.
    pub mtu_efficiency: Percent,
    /// Bytes on an Ethernet wire per full-size packet: link MTU + 38 (header, FCS, preamble,
    /// SFD, gap) + 4 per VLAN tag.
    pub wire_bytes: ByteSize,
    /// TCP payload ÷ wire bytes: the share of line rate one can get as TCP goodput.
    pub goodput_efficiency: Percent,
    /// The same without any tunnel, for comparison.
    pub goodput_efficiency_untunnelled: Percent,
    /// The link rate, when given.
    pub link: Option<BitRate>,
    /// TCP goodput at line rate through the stack, when the link rate is given.
    pub goodput: Option<BitRate>,
    /// Things to know about the result.
    pub warnings: Vec<String>,
}

/// Why a stack does not work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TunnelError {
    /// No encapsulation given.
    #[error("no encapsulation given")]
    Empty,
    /// The link MTU is outside 68 … 65535.
    #[error("the link MTU ({mtu} bytes) must be between 68 and 65535 bytes")]
    Mtu {
        /// The MTU given.
        mtu: u64,
    },
    /// Nothing useful fits.
    #[error(
        "{encap} does not fit in {outside} bytes: nothing is left for an {inner} packet with TCP"
    )]
    DoesNotFit {
        /// The layer that ran out.
        encap: Encap,
        /// Bytes available outside it.
        outside: u64,
        /// Inner IP version.
        inner: IpVersion,
    },
}

fn tcp_payload_share(payload: u64, wire: u64) -> Percent {
    Percent::from_fraction(payload as f64 / wire as f64)
}

/// Computes the stack `specs` (outermost first) on a link of `link_mtu`, with `default_outer`
/// for layers that do not say, `inner` inside, and an optional link rate.
pub fn tunnel_report(
    link_mtu: ByteSize,
    specs: &[EncapSpec],
    default_outer: IpVersion,
    inner: IpVersion,
    link: Option<BitRate>,
) -> Result<TunnelReport, TunnelError> {
    if specs.is_empty() {
        return Err(TunnelError::Empty);
    }
    if !(68..=65_535).contains(&link_mtu.bytes()) {
        return Err(TunnelError::Mtu {
            mtu: link_mtu.bytes(),
        });
    }
    let tcp_headers = inner.header_bytes() + 20;
    let mut layers = Vec::with_capacity(specs.len());
    let mut avail = link_mtu.bytes();
    let mut vlans = 0;
    for spec in specs {
        let outer = spec.outer.unwrap_or(default_outer);
        let inside = spec
            .encap
            .inner_mtu(avail, outer)
            .filter(|&m| m > tcp_headers + TCP_TIMESTAMP_BYTES)
            .ok_or(TunnelError::DoesNotFit {
                encap: spec.encap,
                outside: avail,
                inner,
            })?;
        if spec.encap == Encap::Vlan {
            vlans += 1;
        }
        layers.push(Layer {
            encap: spec.encap,
            outer: spec.encap.has_outer_ip().then_some(outer),
            parts: spec.encap.parts(outer),
            overhead: ByteSize::from_bytes(avail - inside),
            mtu_outside: ByteSize::from_bytes(avail),
            mtu_inside: ByteSize::from_bytes(inside),
        });
        avail = inside;
    }
    let inner_mtu = avail;
    let tcp_mss = inner_mtu - tcp_headers;
    let tcp_payload = tcp_mss - TCP_TIMESTAMP_BYTES;
    let wire = link_mtu.bytes() + L1_OVERHEAD + L2_OVERHEAD + 4 * vlans;
    let goodput_efficiency = tcp_payload_share(tcp_payload, wire);
    let plain_payload = link_mtu
        .bytes()
        .saturating_sub(tcp_headers + TCP_TIMESTAMP_BYTES);
    let mut warnings = Vec::new();
    if inner_mtu < inner.min_mtu() {
        warnings.push(format!(
            "the inner MTU ({inner_mtu} bytes) is below the {inner} minimum of {} bytes: raise \
             the link MTU or the stack will not carry {inner}",
            inner.min_mtu()
        ));
    }
    if inner == IpVersion::Ipv4 && inner_mtu < IpVersion::Ipv6.min_mtu() {
        warnings.push(format!(
            "the inner MTU ({inner_mtu} bytes) is below 1280: IPv6 cannot run inside"
        ));
    }
    if vlans > 1 {
        warnings.push(format!(
            "{vlans} VLAN tags make {}-byte frames: every switch on the path must accept them",
            link_mtu.bytes() + L2_OVERHEAD + 4 * vlans
        ));
    }
    Ok(TunnelReport {
        link_mtu,
        layers,
        inner,
        inner_mtu: ByteSize::from_bytes(inner_mtu),
        overhead: ByteSize::from_bytes(link_mtu.bytes() - inner_mtu),
        tcp_mss: ByteSize::from_bytes(tcp_mss),
        tcp_payload: ByteSize::from_bytes(tcp_payload),
        mtu_efficiency: Percent::from_fraction(inner_mtu as f64 / link_mtu.as_f64()),
        wire_bytes: ByteSize::from_bytes(wire),
        goodput_efficiency,
        goodput_efficiency_untunnelled: tcp_payload_share(
            plain_payload,
            link_mtu.bytes() + L1_OVERHEAD + L2_OVERHEAD,
        ),
        link,
        goodput: link.map(|l| BitRate::from_bps_f64(l.as_f64() * goodput_efficiency.fraction())),
        warnings,
    })
}

/// The TCP timestamp option as sent on every segment (10 bytes padded to 12).
const TCP_TIMESTAMP_BYTES: u64 = 12;

#[cfg(test)]
mod tests {
    use super::*;

    fn stack(mtu: u64, names: &[&str]) -> TunnelReport {
        let specs: Vec<EncapSpec> = names.iter().map(|n| n.parse().unwrap()).collect();
        tunnel_report(
            ByteSize::from_bytes(mtu),
            &specs,
            IpVersion::Ipv4,
            IpVersion::Ipv4,
            None,
        )
        .unwrap()
    }

    #[test]
    fn inner_mtus() {
        assert_eq!(stack(1500, &["wireguard"]).inner_mtu.bytes(), 1440);
        assert_eq!(stack(1500, &["wireguard:ipv6"]).inner_mtu.bytes(), 1420);
        assert_eq!(stack(1500, &["vxlan"]).inner_mtu.bytes(), 1450);
        assert_eq!(stack(1500, &["pppoe"]).inner_mtu.bytes(), 1492);
        assert_eq!(stack(1500, &["gre"]).inner_mtu.bytes(), 1476);
        // ESP: 1500 − 20 − 8 − 8 − 16 = 1448 aligned to 4, minus the 2-byte trailer.
        assert_eq!(stack(1500, &["ipsec-esp-aes-gcm"]).inner_mtu.bytes(), 1446);
        // 1499: 1447 → 1444 − 2 = 1442 (3 bytes of padding).
        assert_eq!(stack(1499, &["esp"]).inner_mtu.bytes(), 1442);
        assert_eq!(stack(1500, &["vlan"]).inner_mtu.bytes(), 1500);
    }

    #[test]
    fn stacks_add_up_outside_in() {
        let r = stack(1500, &["pppoe", "wireguard"]);
        assert_eq!(r.inner_mtu.bytes(), 1432);
        assert_eq!(r.tcp_mss.bytes(), 1392);
        assert_eq!(r.tcp_payload.bytes(), 1380);
        assert_eq!(r.overhead.bytes(), 68);
        assert_eq!(r.layers[0].mtu_inside.bytes(), 1492);
        assert_eq!(r.layers[1].overhead.bytes(), 60);
        assert_eq!(r.wire_bytes.bytes(), 1538);
        assert!((r.goodput_efficiency.percent() - 1380.0 / 1538.0 * 100.0).abs() < 1e-9);
        assert!(
            (r.goodput_efficiency_untunnelled.percent() - 1448.0 / 1538.0 * 100.0).abs() < 1e-9
        );
        let tagged = stack(1500, &["vlan", "vlan", "vxlan"]);
        assert_eq!(tagged.inner_mtu.bytes(), 1450);
        assert_eq!(tagged.wire_bytes.bytes(), 1546);
        assert_eq!(tagged.warnings.len(), 1);
    }

    #[test]
    fn ipv6_inside_and_link_rate() {
        let specs = ["wireguard".parse().unwrap()];
        let r = tunnel_report(
            ByteSize::from_bytes(1500),
            &specs,
            IpVersion::Ipv6,
            IpVersion::Ipv6,
            Some(BitRate::from_gbps(1)),
        )
        .unwrap();
        assert_eq!(r.inner_mtu.bytes(), 1420);
        assert_eq!(r.tcp_mss.bytes(), 1360);
        let g = r.goodput.unwrap().as_f64();
        assert!((g - 1e9 * 1348.0 / 1538.0).abs() < 1.0);
    }

    #[test]
    fn refusals() {
        assert!(
            "nosuch"
                .parse::<EncapSpec>()
                .unwrap_err()
                .to_string()
                .contains("wireguard")
        );
        assert!("vlan:ipv6".parse::<EncapSpec>().is_err());
        assert!("wireguard:ipv5".parse::<EncapSpec>().is_err());
        let specs: Vec<EncapSpec> = ["wireguard".parse().unwrap(); 30].to_vec();
        let e = tunnel_report(
            ByteSize::from_bytes(1500),
            &specs,
            IpVersion::Ipv4,
            IpVersion::Ipv4,
            None,
        )
        .unwrap_err();
        assert!(matches!(e, TunnelError::DoesNotFit { .. }), "{e}");
        assert_eq!(
            tunnel_report(
                ByteSize::from_bytes(1500),
                &[],
                IpVersion::Ipv4,
                IpVersion::Ipv4,
                None
            ),
            Err(TunnelError::Empty)
        );
        let low = stack(1300, &["wireguard"]);
        assert!(!low.warnings.is_empty());
    }
}
