//! The encapsulation catalogue: each encapsulation's headers, byte counts, assumed
//! configuration and source, and how names are written on the command line.

use std::fmt;
use std::str::FromStr;

use linerate_units::ByteSize;

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

/// One encapsulation as `calc tunnel --list` shows it: header bytes (per outer IP version
/// when it has an outer IP header), the headers, the configuration assumed and the source.
#[derive(Debug, serde::Serialize)]
pub struct ListEntry {
    /// The encapsulation.
    pub name: Encap,
    /// Header bytes with an IPv4 outer header.
    pub bytes_ipv4: Option<u64>,
    /// Header bytes with an IPv6 outer header.
    pub bytes_ipv6: Option<u64>,
    /// Header bytes of one without an outer IP header.
    pub bytes: Option<u64>,
    /// Whether it lowers the inner MTU.
    pub reduces_mtu: bool,
    /// Its headers (IPv4 outer).
    pub parts: Vec<HeaderPart>,
    /// The configuration its sizes assume.
    pub assumes: &'static str,
    /// Where the sizes come from.
    pub source: &'static str,
}

/// Every encapsulation, as `calc tunnel --list` shows them.
#[derive(Debug, serde::Serialize)]
pub struct List {
    /// In [`Encap::ALL`]'s order.
    pub encapsulations: Vec<ListEntry>,
}

/// The list of every encapsulation.
pub fn list() -> List {
    List {
        encapsulations: Encap::ALL
            .iter()
            .map(|&e| {
                let ip = e.has_outer_ip();
                ListEntry {
                    name: e,
                    bytes_ipv4: ip.then(|| e.header_bytes(IpVersion::Ipv4)),
                    bytes_ipv6: ip.then(|| e.header_bytes(IpVersion::Ipv6)),
                    bytes: (!ip).then(|| e.header_bytes(IpVersion::Ipv4)),
                    reduces_mtu: e.reduces_mtu(),
                    parts: e.parts(IpVersion::Ipv4),
                    assumes: e.assumes(),
                    source: e.source(),
                }
            })
            .collect(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn readme_table_matches_the_code() {
        let readme = include_str!("../../README.md");
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
