//! Building one netlink message: header, family header, attributes and nests.

/// The protocol constants used (from linux/netlink.h, rtnetlink.h, if_link.h, veth.h,
/// neighbour.h, pkt_sched.h).
#[allow(missing_docs)]
pub mod consts {
    pub const NLMSG_ERROR: u16 = 2;
    pub const NLM_F_REQUEST: u16 = 0x1;
    pub const NLM_F_ACK: u16 = 0x4;
    pub const NLM_F_REPLACE: u16 = 0x100;
    pub const NLM_F_EXCL: u16 = 0x200;
    pub const NLM_F_CREATE: u16 = 0x400;
    pub const RTM_NEWLINK: u16 = 16;
    pub const RTM_GETLINK: u16 = 18;
    pub const RTM_NEWADDR: u16 = 20;
    pub const RTM_NEWROUTE: u16 = 24;
    pub const RTM_NEWNEIGH: u16 = 28;
    pub const RTM_NEWQDISC: u16 = 36;
    pub const IFF_UP: u32 = 0x1;
    pub const IFLA_ADDRESS: u16 = 1;
    pub const IFLA_IFNAME: u16 = 3;
    pub const IFLA_MTU: u16 = 4;
    pub const IFLA_LINKINFO: u16 = 18;
    pub const IFLA_NET_NS_FD: u16 = 28;
    pub const IFLA_INFO_KIND: u16 = 1;
    pub const IFLA_INFO_DATA: u16 = 2;
    pub const VETH_INFO_PEER: u16 = 1;
    pub const IFA_ADDRESS: u16 = 1;
    pub const IFA_LOCAL: u16 = 2;
    pub const RTA_DST: u16 = 1;
    pub const RTA_OIF: u16 = 4;
    pub const RTA_GATEWAY: u16 = 5;
    pub const RT_TABLE_MAIN: u8 = 254;
    pub const RTPROT_STATIC: u8 = 4;
    pub const RT_SCOPE_UNIVERSE: u8 = 0;
    pub const RTN_UNICAST: u8 = 1;
    pub const NDA_DST: u16 = 1;
    pub const NDA_LLADDR: u16 = 2;
    pub const NUD_PERMANENT: u16 = 0x80;
    pub const TCA_KIND: u16 = 1;
    pub const TCA_OPTIONS: u16 = 2;
    pub const TC_H_ROOT: u32 = 0xFFFF_FFFF;
}

/// A netlink message under construction.
pub struct Msg {
    buf: Vec<u8>,
}

impl Msg {
    /// A message of type `ty` with `flags`; length and sequence are filled by [`Msg::finish`].
    pub fn new(ty: u16, flags: u16) -> Msg {
        let mut buf = Vec::with_capacity(256);
        buf.extend_from_slice(&[0; 4]);
        buf.extend_from_slice(&ty.to_ne_bytes());
        buf.extend_from_slice(&flags.to_ne_bytes());
        buf.extend_from_slice(&[0; 8]);
        Msg { buf }
    }

    fn pad(&mut self) {
        while self.buf.len() % 4 != 0 {
            self.buf.push(0);
        }
    }

    /// Appends raw bytes (a family header or a struct), padded to 4 bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        self.pad();
    }

    /// Appends attribute `ty` holding `data`.
    pub fn attr(&mut self, ty: u16, data: &[u8]) {
        let len = (4 + data.len()) as u16;
        self.buf.extend_from_slice(&len.to_ne_bytes());
        self.buf.extend_from_slice(&ty.to_ne_bytes());
        self.buf.extend_from_slice(data);
        self.pad();
    }

    /// Appends a u32 attribute.
    pub fn attr_u32(&mut self, ty: u16, v: u32) {
        self.attr(ty, &v.to_ne_bytes());
    }

    /// Appends a u64 attribute.
    pub fn attr_u64(&mut self, ty: u16, v: u64) {
        self.attr(ty, &v.to_ne_bytes());
    }

    /// Appends a NUL-terminated string attribute.
    pub fn attr_str(&mut self, ty: u16, s: &str) {
        let mut v = Vec::with_capacity(s.len() + 1);
        v.extend_from_slice(s.as_bytes());
        v.push(0);
        self.attr(ty, &v);
    }

    /// Opens a nested attribute; close it with [`Msg::nest_end`].
    pub fn nest_start(&mut self, ty: u16) -> usize {
        let at = self.buf.len();
        self.buf.extend_from_slice(&[0, 0]);
        self.buf.extend_from_slice(&ty.to_ne_bytes());
        at
    }

    /// Closes the nest opened at `at`.
    pub fn nest_end(&mut self, at: usize) {
        let len = (self.buf.len() - at) as u16;
        self.buf[at..at + 2].copy_from_slice(&len.to_ne_bytes());
    }

    /// The bytes after the netlink header (for option blobs built with this builder).
    pub fn into_payload(self) -> Vec<u8> {
        self.buf[16..].to_vec()
    }

    /// Fills in length and sequence number and returns the wire bytes.
    pub fn finish(&mut self, seq: u32) -> &[u8] {
        let len = self.buf.len() as u32;
        self.buf[0..4].copy_from_slice(&len.to_ne_bytes());
        self.buf[8..12].copy_from_slice(&seq.to_ne_bytes());
        &self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_are_padded_and_nests_sized() {
        let mut m = Msg::new(16, 1);
        m.push(&[1, 2, 3, 4, 5, 6]);
        let n = m.nest_start(18);
        m.attr_str(1, "veth");
        m.nest_end(n);
        let bytes = m.finish(7).to_vec();
        assert_eq!(bytes.len() % 4, 0);
        assert_eq!(
            u32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize,
            bytes.len()
        );
        assert_eq!(
            u32::from_ne_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]),
            7
        );
        // header 16 + struct 8 (padded) + nest header 4 + attr (4 + 5 -> 12)
        assert_eq!(bytes.len(), 16 + 8 + 4 + 12);
        let nest_len = u16::from_ne_bytes([bytes[24], bytes[25]]);
        assert_eq!(nest_len, 16);
        assert_eq!(&bytes[32..37], b"veth\0");
    }
}
