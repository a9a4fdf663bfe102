//! Tunnel and encapsulation overhead: the MTU left inside a stack of encapsulations, the TCP
//! MSS that fits it, and how much of the wire carries payload.
//!
//! Each encapsulation's bytes are listed part by part ([`Encap::parts`]) with the assumed
//! configuration ([`Encap::assumes`]); `linerate calc tunnel --list` prints them.

use std::fmt;
use std::str::FromStr;

use linerate_units::{BitRate, ByteSize, Percent};

use crate::ethernet::{L1_OVERHEAD, L2_OVERHEAD};

/// IP version of a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IpVersion {
    /// 20-byte header (no options).
    Ipv4,
    /// 40-byte header (no extension headers).
    Ipv6,
}

impl IpVersion {
    /// Header size without options.
    pub fn header_bytes(self) -> u64 {
        match self {
            IpVersion::Ipv4 => 20,
            IpVersion::Ipv6 => 40,
        }
    }

    /// The smallest MTU the version allows (RFC 791: 68; RFC 8200: 1280).
    pub fn min_mtu(self) -> u64 {
        match self {
            IpVersion::Ipv4 => 68,
            IpVersion::Ipv6 => 1280,
        }
    }
}

impl fmt::Display for IpVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IpVersion::Ipv4 => "ipv4",
            IpVersion::Ipv6 => "ipv6",
        })
    }
}

impl FromStr for IpVersion {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "4" | "v4" | "ipv4" | "ip4" => Ok(IpVersion::Ipv4),
            "6" | "v6" | "ipv6" | "ip6" => Ok(IpVersion::Ipv6),
            other => Err(format!(
                "'{other}' is not an IP version: expected ipv4 or ipv6"
            )),
        }
    }
}

/// An encapsulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encap {
    /// OpenVPN over UDP, tun mode, AEAD cipher (AES-256-GCM), DATA_V2 packets.
    OpenVpnUdp,
    /// OpenVPN over TCP, same data channel, plus the 2-byte length prefix.
    OpenVpnTcp,
    /// WireGuard.
    WireGuard,
    /// IPsec ESP in tunnel mode with AES-GCM (RFC 4106), 16-byte ICV.
    IpsecEspAesGcm,
    /// The same inside UDP port 4500 (NAT traversal, RFC 3948).
    IpsecEspAesGcmNatT,
    /// GRE without key or sequence number (RFC 2784).
    Gre,
    /// GRE carrying Ethernet frames (gretap): GRE plus the inner Ethernet header.
    GreTap,
    /// IP in IP (ipip, sit, ip6tnl): one more IP header.
    IpIp,
    /// VXLAN (RFC 7348): outer IP, UDP, VXLAN header, inner Ethernet header.
    Vxlan,
    /// Geneve (RFC 8926) without options: same shape as VXLAN.
    Geneve,
    /// PPPoE session (RFC 2516): PPPoE header and PPP protocol field.
    Pppoe,
    /// An 802.1Q VLAN tag.
    Vlan,
    /// One MPLS label stack entry.
    Mpls,
}

/// One header's share of an encapsulation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HeaderPart {
    /// What it is.
    pub name: &'static str,
    /// Its size.
    pub bytes: ByteSize,
}

impl Encap {
    /// Every encapsulation, in the order `--list` shows them.
    pub const ALL: [Encap; 13] = [
        Encap::OpenVpnUdp,
        Encap::OpenVpnTcp,
        Encap::WireGuard,
        Encap::IpsecEspAesGcm,
        Encap::IpsecEspAesGcmNatT,
        Encap::Gre,
        Encap::GreTap,
        Encap::IpIp,
        Encap::Vxlan,
        Encap::Geneve,
        Encap::Pppoe,
        Encap::Vlan,
        Encap::Mpls,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Encap::OpenVpnUdp => "openvpn-udp",
            Encap::OpenVpnTcp => "openvpn-tcp",
            Encap::WireGuard => "wireguard",
            Encap::IpsecEspAesGcm => "ipsec-esp-aes-gcm",
            Encap::IpsecEspAesGcmNatT => "ipsec-esp-aes-gcm-natt",
            Encap::Gre => "gre",
            Encap::GreTap => "gretap",
            Encap::IpIp => "ipip",
            Encap::Vxlan => "vxlan",
            Encap::Geneve => "geneve",
            Encap::Pppoe => "pppoe",
            Encap::Vlan => "vlan",
            Encap::Mpls => "mpls",
        }
    }

    /// True when the encapsulation adds an outer IP header (so IPv4/IPv6 outer matters).
    pub fn has_outer_ip(self) -> bool {
        !matches!(self, Encap::Pppoe | Encap::Vlan | Encap::Mpls)
    }

    /// True when the bytes come out of the MTU. An 802.1Q tag does not: 802.3 allows 1522-byte
    /// tagged frames, so a VLAN interface keeps the parent's MTU and the frame grows instead.
    pub fn reduces_mtu(self) -> bool {
        !matches!(self, Encap::Vlan)
    }

    /// The headers, outermost first, for an outer IP header of `outer` (ignored by encapsulations
    /// without one). Block padding (ESP) is not listed: see [`Encap::block`].
    pub fn parts(self, outer: IpVersion) -> Vec<HeaderPart> {
        let ip = (
            match outer {
                IpVersion::Ipv4 => "outer IPv4 header",
                IpVersion::Ipv6 => "outer IPv6 header",
            },
            outer.header_bytes(),
        );
        let list: Vec<(&'static str, u64)> = match self {
            Encap::OpenVpnUdp => vec![
                ip,
                ("UDP header", 8),
                ("opcode/key id + peer id (DATA_V2)", 4),
                ("packet id (AEAD nonce head)", 4),
                ("GCM tag", 16),
            ],
            Encap::OpenVpnTcp => vec![
                ip,
                ("TCP header with timestamps", 32),
                ("packet length", 2),
                ("opcode/key id + peer id (DATA_V2)", 4),
                ("packet id (AEAD nonce head)", 4),
                ("GCM tag", 16),
            ],
            Encap::WireGuard => vec![
                ip,
                ("UDP header", 8),
                ("type + reserved", 4),
                ("receiver index", 4),
                ("counter (nonce)", 8),
                ("Poly1305 tag", 16),
            ],
            Encap::IpsecEspAesGcm => vec![
                ip,
                ("ESP SPI + sequence number", 8),
                ("GCM IV", 8),
                ("ESP pad length + next header", 2),
                ("GCM ICV", 16),
            ],
            Encap::IpsecEspAesGcmNatT => vec![
                ip,
                ("UDP header (port 4500)", 8),
                ("ESP SPI + sequence number", 8),
                ("GCM IV", 8),
                ("ESP pad length + next header", 2),
                ("GCM ICV", 16),
            ],
            Encap::Gre => vec![ip, ("GRE header", 4)],
            Encap::GreTap => vec![ip, ("GRE header", 4), ("inner Ethernet header", 14)],
            Encap::IpIp => vec![ip],
            Encap::Vxlan => vec![
                ip,
                ("UDP header", 8),
                ("VXLAN header", 8),
                ("inner Ethernet header", 14),
            ],
            Encap::Geneve => vec![
                ip,
                ("UDP header", 8),
                ("Geneve header (no options)", 8),
                ("inner Ethernet header", 14),
            ],
            Encap::Pppoe => vec![("PPPoE header", 6), ("PPP protocol", 2)],
            Encap::Vlan => vec![("802.1Q tag", 4)],
            Encap::Mpls => vec![("MPLS label stack entry", 4)],
        };
        list.into_iter()
            .map(|(name, bytes)| HeaderPart {
                name,
                bytes: ByteSize::from_bytes(bytes),
            })
            .collect()
    }

    /// Fixed header bytes (no padding).
    pub fn header_bytes(self, outer: IpVersion) -> u64 {
        self.parts(outer).iter().map(|p| p.bytes.bytes()).sum()
    }

    /// ESP pads payload + pad length + next header to a multiple of 4 bytes (RFC 4303 2.4);
    /// returns (alignment, trailer bytes inside the padded block, bytes after it).
    pub fn block(self) -> Option<(u64, u64, u64)> {
        match self {
            Encap::IpsecEspAesGcm | Encap::IpsecEspAesGcmNatT => Some((4, 2, 16)),
            _ => None,
        }
    }

    /// The largest packet that fits inside when `outside` bytes are available.
    pub fn inner_mtu(self, outside: u64, outer: IpVersion) -> Option<u64> {
        if !self.reduces_mtu() {
            return Some(outside);
        }
        let header = self.header_bytes(outer);
        match self.block() {
            None => outside.checked_sub(header),
            Some((align, trailer, after)) => {
                let before = header - trailer - after;
                let space = outside.checked_sub(before + after)?;
                (space / align * align).checked_sub(trailer)
            }
        }
    }

    /// The configuration the byte counts assume.
    pub fn assumes(self) -> &'static str {
        match self {
            Encap::OpenVpnUdp => {
                "OpenVPN ≥ 2.4, tun device, AEAD cipher (AES-256-GCM or ChaCha20-Poly1305), \
                 DATA_V2 packets, no compression framing; CBC+HMAC ciphers add an IV, HMAC and \
                 block padding, tap devices add an inner Ethernet header (14)"
            }
            Encap::OpenVpnTcp => {
                "as openvpn-udp, over TCP: 2-byte packet length, outer TCP header with the \
                 timestamp option (Linux default)"
            }
            Encap::WireGuard => {
                "data message; the plaintext is padded to 16 bytes but never beyond the tunnel \
                 MTU, so full-size packets carry exactly these bytes"
            }
            Encap::IpsecEspAesGcm => {
                "tunnel mode, AES-GCM with 8-byte IV and 16-byte ICV (RFC 4106), no \
                 extended sequence numbers on the wire; 0-3 bytes of padding align the trailer"
            }
            Encap::IpsecEspAesGcmNatT => "as ipsec-esp-aes-gcm, inside UDP 4500 (RFC 3948)",
            Encap::Gre => "no checksum, key or sequence number (each adds 4)",
            Encap::GreTap => "as gre, carrying Ethernet frames without a VLAN tag",
            Encap::IpIp => "IPv4 or IPv6 in IPv4 or IPv6: one outer header",
            Encap::Vxlan => "inner frame untagged; an inner VLAN tag adds 4",
            Encap::Geneve => "no options (each option adds 4 or more)",
            Encap::Pppoe => "PPPoE session on Ethernet; the MTU is the Ethernet payload (1492)",
            Encap::Vlan => {
                "802.1Q tag: the frame grows to 1522 bytes and the MTU stays (802.3ac); the \
                 wire figures count the 4 bytes"
            }
            Encap::Mpls => "one label; stack several with mpls,mpls",
        }
    }

    /// Where the byte counts come from.
    pub fn source(self) -> &'static str {
        match self {
            Encap::OpenVpnUdp | Encap::OpenVpnTcp => {
                "OpenVPN protocol description (ssl.h / doxygen network_protocol); Linux ovpn \
                 driver proto.h (4-byte DATA_V2 opcode, 4-byte packet id, 16-byte tag)"
            }
            Encap::WireGuard => "wireguard.com/protocol; J. Donenfeld, wireguard list, 2017-12-11",
            Encap::IpsecEspAesGcm => "RFC 4303 (ESP), RFC 4106 (GCM in ESP)",
            Encap::IpsecEspAesGcmNatT => "RFC 4303, RFC 4106, RFC 3948",
            Encap::Gre | Encap::GreTap => "RFC 2784",
            Encap::IpIp => "RFC 2003, RFC 2473",
            Encap::Vxlan => "RFC 7348",
            Encap::Geneve => "RFC 8926",
            Encap::Pppoe => "RFC 2516",
            Encap::Vlan => "IEEE 802.1Q, 802.3ac",
            Encap::Mpls => "RFC 3032",
        }
    }
}

impl fmt::Display for Encap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for Encap {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// An encapsulation as written: `wireguard`, `wireguard:ipv6`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncapSpec {
    /// The encapsulation.
    pub encap: Encap,
    /// Its outer IP version when given (`:ipv6`), else the default.
    pub outer: Option<IpVersion>,
}

/// Why an encapsulation name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{input}' is not an encapsulation: {reason}")]
pub struct EncapParseError {
    input: String,
    reason: String,
}

fn known_names() -> String {
    Encap::ALL
        .iter()
        .map(|e| e.name())
        .collect::<Vec<_>>()
        .join(", ")
}

impl FromStr for EncapSpec {
    type Err = EncapParseError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let err = |reason: String| EncapParseError {
            input: input.to_owned(),
            reason,
        };
        let s = input.trim().to_ascii_lowercase();
        let (name, version) = match s.split_once([':', '@']) {
            Some((name, v)) => (name.to_owned(), Some(v.parse::<IpVersion>().map_err(err)?)),
            None => (s, None),
        };
        let encap = match name.as_str() {
            "wg" => Some(Encap::WireGuard),
            "ipsec" | "esp" => Some(Encap::IpsecEspAesGcm),
            "ipsec-natt" | "esp-natt" => Some(Encap::IpsecEspAesGcmNatT),
            "dot1q" | "802.1q" => Some(Encap::Vlan),
            "openvpn" => Some(Encap::OpenVpnUdp),
            "sit" | "ip6tnl" | "ip-in-ip" => Some(Encap::IpIp),
            _ => Encap::ALL.into_iter().find(|e| e.name() == name),
        }
        .ok_or_else(|| err(format!("known: {}", known_names())))?;
        if version.is_some() && !encap.has_outer_ip() {
            return Err(err(format!("{encap} has no outer IP header")));
        }
        Ok(EncapSpec {
            encap,
            outer: version,
        })
    }
}

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
    fn header_bytes_of_the_common_ones() {
        let v4 = IpVersion::Ipv4;
        let v6 = IpVersion::Ipv6;
        assert_eq!(Encap::WireGuard.header_bytes(v4), 60);
        assert_eq!(Encap::WireGuard.header_bytes(v6), 80);
        assert_eq!(Encap::Vxlan.header_bytes(v4), 50);
        assert_eq!(Encap::Gre.header_bytes(v4), 24);
        assert_eq!(Encap::Pppoe.header_bytes(v4), 8);
        assert_eq!(Encap::Vlan.header_bytes(v4), 4);
        assert_eq!(Encap::OpenVpnUdp.header_bytes(v4), 52);
        assert_eq!(Encap::OpenVpnTcp.header_bytes(v4), 78);
        assert_eq!(Encap::IpsecEspAesGcm.header_bytes(v4), 54);
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

    #[test]
    fn readme_table_matches_the_code() {
        let readme = include_str!("../README.md");
        let mut seen = 0;
        for line in readme.lines() {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let Some(encap) = cells
                .get(1)
                .and_then(|name| Encap::ALL.into_iter().find(|e| e.name() == *name))
            else {
                continue;
            };
            assert_eq!(
                cells[2],
                encap.header_bytes(IpVersion::Ipv4).to_string(),
                "{line}"
            );
            assert_eq!(
                cells[3],
                encap.header_bytes(IpVersion::Ipv6).to_string(),
                "{line}"
            );
            seen += 1;
        }
        assert_eq!(seen, Encap::ALL.len());
    }
}
