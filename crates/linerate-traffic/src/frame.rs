//! Raw Ethernet/IPv4/UDP frames for the frame generator (`linerate gen`): built once per flow
//! and size, then stamped per frame with linerate's signature, a sequence number and a send
//! timestamp, the UDP checksum updated from a precomputed partial sum. Also the interleaved
//! order of an IMIX (smooth weighted round robin, so sizes are spread, never sent in blocks).
//!
//! Frame sizes count the FCS, as `calc rate` does: a 64-byte frame is 60 bytes handed to the
//! kernel, which (or the NIC) appends the 4-byte FCS.

use std::net::Ipv4Addr;

/// Bytes of the FCS the sender does not write.
pub const FCS: usize = 4;
/// Ethernet + IPv4 + UDP header bytes.
pub const HEADERS: usize = 14 + 20 + 8;
/// Offset of the stamp (signature, sequence, timestamp) in a frame.
pub const STAMP_OFFSET: usize = HEADERS;
/// Bytes of the stamp: 4 signature, 8 sequence, 6 timestamp (nanoseconds, low 48 bits).
pub const STAMP_LEN: usize = 18;
/// The signature at the start of every generated frame's UDP payload.
pub const SIGNATURE: [u8; 4] = *b"LRg1";
/// Smallest frame (FCS included) that holds the headers and the stamp: 64 bytes.
pub const MIN_FRAME: usize = 64;
/// Largest frame (FCS included).
pub const MAX_FRAME: usize = 9018;

const UDP_CSUM_OFFSET: usize = 14 + 20 + 6;

/// Addresses and ports of one flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowAddr {
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// Source IPv4 address.
    pub src_ip: Ipv4Addr,
    /// Destination IPv4 address.
    pub dst_ip: Ipv4Addr,
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
}

impl FlowAddr {
    /// Flow `i` of `n` varied from `self`: the source port steps through `i`, so RSS and
    /// conntrack see `n` distinct 5-tuples.
    pub fn nth(&self, i: u16) -> FlowAddr {
        FlowAddr {
            src_port: self.src_port.wrapping_add(i),
            ..*self
        }
    }
}

/// Why a frame cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The size is outside [`MIN_FRAME`] … [`MAX_FRAME`].
    #[error(
        "frame size {0} bytes is out of range: expected {MIN_FRAME} … {MAX_FRAME} (FCS included)"
    )]
    Size(usize),
}

/// One prebuilt frame (without FCS) and the partial checksum of everything in its UDP
/// checksum except the stamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    bytes: Vec<u8>,
    udp_partial: u32,
}

impl Template {
    /// Builds a frame of `frame_size` bytes (FCS included) for `flow`, IPv4 checksum set, the
    /// stamp zero and the UDP checksum left to [`Template::stamp`].
    pub fn new(flow: &FlowAddr, frame_size: usize) -> Result<Template, FrameError> {
        if !(MIN_FRAME..=MAX_FRAME).contains(&frame_size) {
            return Err(FrameError::Size(frame_size));
        }
        let len = frame_size - FCS;
        let mut b = vec![0u8; len];
        b[0..6].copy_from_slice(&flow.dst_mac);
        b[6..12].copy_from_slice(&flow.src_mac);
        b[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        let ip_len = u16::try_from(len - 14).map_err(|_| FrameError::Size(frame_size))?;
        let ip = &mut b[14..34];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
        ip[6] = 0x40; // don't fragment
        ip[8] = 64; // TTL
        ip[9] = 17; // UDP
        ip[12..16].copy_from_slice(&flow.src_ip.octets());
        ip[16..20].copy_from_slice(&flow.dst_ip.octets());
        let csum = fold(sum_words(ip));
        ip[10..12].copy_from_slice(&csum.to_be_bytes());
        let udp_len = ip_len - 20;
        let udp = &mut b[34..42];
        udp[0..2].copy_from_slice(&flow.src_port.to_be_bytes());
        udp[2..4].copy_from_slice(&flow.dst_port.to_be_bytes());
        udp[4..6].copy_from_slice(&udp_len.to_be_bytes());
        b[STAMP_OFFSET..STAMP_OFFSET + 4].copy_from_slice(&SIGNATURE);
        // Pseudo-header (addresses, protocol, UDP length) plus the UDP header and payload with
        // the sequence and timestamp zero (their words are added per frame).
        let mut partial = sum_words(&b[26..34]) + 17 + u32::from(udp_len);
        partial += sum_words(&b[34..]);
        Ok(Template {
            bytes: b,
            udp_partial: partial,
        })
    }

    /// The frame bytes (FCS excluded), stamp zero.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Copies the frame into `out` (at least as long as the frame) with `seq` and `ts_ns`
    /// stamped and the UDP checksum set; returns the frame's length.
    pub fn stamp(&self, out: &mut [u8], seq: u64, ts_ns: u64) -> usize {
        let n = self.bytes.len();
        out[..n].copy_from_slice(&self.bytes);
        self.restamp(out, seq, ts_ns)
    }

    /// Rewrites only the stamp and the UDP checksum of a frame [`Template::stamp`] wrote into
    /// `out` before (from this template): what a ring slot reused for the same frame needs.
    /// Returns the frame's length.
    pub fn restamp(&self, out: &mut [u8], seq: u64, ts_ns: u64) -> usize {
        let n = self.bytes.len();
        let s = &mut out[STAMP_OFFSET + 4..STAMP_OFFSET + STAMP_LEN];
        s[0..8].copy_from_slice(&seq.to_be_bytes());
        s[8..14].copy_from_slice(&ts_ns.to_be_bytes()[2..8]);
        let mut csum = fold(self.udp_partial + sum_words(s));
        if csum == 0 {
            csum = 0xffff; // zero means "no checksum" in UDP over IPv4
        }
        out[UDP_CSUM_OFFSET..UDP_CSUM_OFFSET + 2].copy_from_slice(&csum.to_be_bytes());
        n
    }
}

/// A stamp read back from a received frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// Sequence number.
    pub seq: u64,
    /// Low 48 bits of the send timestamp in nanoseconds.
    pub ts_ns48: u64,
}

/// Reads the stamp of `frame` when it is an IPv4/UDP frame carrying linerate's signature.
pub fn parse_stamp(frame: &[u8]) -> Option<Stamp> {
    if frame.len() < STAMP_OFFSET + STAMP_LEN
        || frame[12..14] != [0x08, 0x00]
        || frame[14] != 0x45
        || frame[23] != 17
        || frame[STAMP_OFFSET..STAMP_OFFSET + 4] != SIGNATURE
    {
        return None;
    }
    let s = &frame[STAMP_OFFSET + 4..STAMP_OFFSET + STAMP_LEN];
    let seq = u64::from_be_bytes(s[0..8].try_into().ok()?);
    let mut ts = [0u8; 8];
    ts[2..8].copy_from_slice(&s[8..14]);
    Some(Stamp {
        seq,
        ts_ns48: u64::from_be_bytes(ts),
    })
}

/// Sum of big-endian 16-bit words (an odd last byte padded with zero).
fn sum_words(b: &[u8]) -> u32 {
    let mut chunks = b.chunks_exact(2);
    let mut sum: u32 = chunks
        .by_ref()
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    if let [last] = chunks.remainder() {
        sum += u32::from(*last) << 8;
    }
    sum
}

/// Folds a one's-complement sum to 16 bits and complements it.
fn fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The order in which sizes of weights `weights` are sent, one cycle of `sum(weights)` slots:
/// smooth weighted round robin, so each size is spread over the cycle (7:4:1 gives no run of
/// the small size longer than two). Returns indices into `weights`.
pub fn interleave(weights: &[u32]) -> Vec<usize> {
    let total: i64 = weights.iter().map(|&w| i64::from(w)).sum();
    let mut current = vec![0i64; weights.len()];
    let mut order = Vec::new();
    for _ in 0..total {
        for (c, &w) in current.iter_mut().zip(weights) {
            *c += i64::from(w);
        }
        let Some(best) = (0..weights.len()).max_by_key(|&i| (current[i], usize::MAX - i)) else {
            break;
        };
        current[best] -= total;
        order.push(best);
    }
    order
}

/// The frames of `--frame`: sizes in bytes (FCS included, a `B` suffix allowed) and `imix`
/// (7:4:1 of 40/576/1500-byte IP packets), comma-separated, in their [`interleave`]d order.
///
/// # Errors
/// A part that is neither a size nor `imix`, or a size outside [`MIN_FRAME`] … [`MAX_FRAME`].
pub fn parse_sizes(s: &str) -> Result<Vec<usize>, String> {
    let mut sizes: Vec<(usize, u32)> = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        if part.eq_ignore_ascii_case("imix") {
            for c in linerate_calc::ethernet::simple_imix() {
                let bytes = usize::try_from(c.frame.bytes()).unwrap_or(usize::MAX);
                sizes.push((bytes, c.weight));
            }
            continue;
        }
        let n: usize = part
            .trim_end_matches(['B', 'b'])
            .parse()
            .map_err(|_| format!("--frame '{part}': not a frame size in bytes or imix"))?;
        if !(MIN_FRAME..=MAX_FRAME).contains(&n) {
            return Err(format!(
                "--frame {n}: out of range, expected {MIN_FRAME} … {MAX_FRAME} bytes (FCS included)"
            ));
        }
        sizes.push((n, 1));
    }
    let weights: Vec<u32> = sizes.iter().map(|s| s.1).collect();
    Ok(interleave(&weights)
        .into_iter()
        .map(|i| sizes[i].0)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_parse_and_interleave() {
        assert_eq!(parse_sizes("64").unwrap(), vec![64]);
        assert_eq!(parse_sizes("64,1518").unwrap(), vec![64, 1518]);
        let imix = parse_sizes("imix").unwrap();
        assert_eq!(imix.len(), 12);
        assert_eq!(imix.iter().filter(|&&s| s == 64).count(), 7);
        assert_eq!(imix.iter().filter(|&&s| s == 594).count(), 4);
        assert_eq!(imix.iter().filter(|&&s| s == 1518).count(), 1);
        assert!(parse_sizes("63").is_err());
        assert!(parse_sizes("big").is_err());
    }

    fn flow() -> FlowAddr {
        FlowAddr {
            dst_mac: [2, 0, 0, 0, 0, 2],
            src_mac: [2, 0, 0, 0, 0, 1],
            src_ip: Ipv4Addr::new(198, 18, 0, 1),
            dst_ip: Ipv4Addr::new(198, 19, 0, 2),
            src_port: 10000,
            dst_port: 9,
        }
    }

    /// A one's-complement sum over data that includes its checksum folds to 0xffff.
    fn verifies(words: u32) -> bool {
        fold(words) == 0
    }

    fn udp_ok(f: &[u8]) -> bool {
        let udp_len = u16::from_be_bytes([f[38], f[39]]);
        verifies(sum_words(&f[26..34]) + 17 + u32::from(udp_len) + sum_words(&f[34..]))
    }

    #[test]
    fn sizes_headers_and_checksums_are_right() {
        for size in [64, 65, 128, 512, 1518, 9000] {
            let t = Template::new(&flow(), size).unwrap();
            let mut out = vec![0u8; size];
            for (seq, ts) in [
                (0, 0),
                (1, 123_456_789),
                (u64::MAX, u64::MAX),
                (77, 1 << 47),
            ] {
                let n = t.stamp(&mut out, seq, ts);
                assert_eq!(n, size - FCS);
                let f = &out[..n];
                assert!(verifies(sum_words(&f[14..34])), "IPv4 checksum, {size}");
                assert!(udp_ok(f), "UDP checksum, size {size} seq {seq}");
                assert_eq!(usize::from(u16::from_be_bytes([f[16], f[17]])), n - 14);
                let s = parse_stamp(f).unwrap();
                assert_eq!(s.seq, seq);
                assert_eq!(s.ts_ns48, ts & ((1 << 48) - 1));
            }
        }
    }

    #[test]
    fn udp_checksum_matches_a_plain_computation() {
        // Known vector: checksum from scratch with the field zeroed equals the stamped one.
        let t = Template::new(&flow().nth(3), 100).unwrap();
        let mut out = vec![0u8; 100];
        let n = t.stamp(&mut out, 42, 4242);
        let mut z = out[..n].to_vec();
        let got = u16::from_be_bytes([z[40], z[41]]);
        z[40] = 0;
        z[41] = 0;
        let udp_len = u16::from_be_bytes([z[38], z[39]]);
        let want = fold(sum_words(&z[26..34]) + 17 + u32::from(udp_len) + sum_words(&z[34..]));
        assert_eq!(got, if want == 0 { 0xffff } else { want });
        assert_eq!(u16::from_be_bytes([z[34], z[35]]), 10003);
    }

    #[test]
    fn restamping_a_reused_buffer_equals_a_fresh_stamp() {
        let t = Template::new(&flow(), 200).unwrap();
        let mut reused = vec![0u8; 200];
        t.stamp(&mut reused, 1, 1);
        for (seq, ts) in [(2, 5), (u64::MAX, 1 << 40), (0, 0)] {
            let n = t.restamp(&mut reused, seq, ts);
            let mut fresh = vec![0u8; 200];
            assert_eq!(t.stamp(&mut fresh, seq, ts), n);
            assert_eq!(reused[..n], fresh[..n]);
            assert!(udp_ok(&reused[..n]));
        }
    }

    #[test]
    fn odd_sizes_pad_the_checksum() {
        let t = Template::new(&flow(), 101).unwrap();
        let mut out = vec![0u8; 101];
        let n = t.stamp(&mut out, 9, 9);
        assert_eq!(n, 97);
        assert!(udp_ok(&out[..n]));
    }

    #[test]
    fn out_of_range_sizes_are_refused() {
        assert_eq!(Template::new(&flow(), 63), Err(FrameError::Size(63)));
        assert_eq!(Template::new(&flow(), 9019), Err(FrameError::Size(9019)));
    }

    #[test]
    fn foreign_frames_have_no_stamp() {
        let t = Template::new(&flow(), 64).unwrap();
        let mut f = t.bytes().to_vec();
        assert!(parse_stamp(&f).is_some());
        f[STAMP_OFFSET] = b'X';
        assert!(parse_stamp(&f).is_none());
        assert!(parse_stamp(&f[..40]).is_none());
    }

    #[test]
    fn imix_is_exact_and_interleaved() {
        let order = interleave(&[7, 4, 1]);
        assert_eq!(order.len(), 12);
        for (i, w) in [7, 4, 1].into_iter().enumerate() {
            assert_eq!(order.iter().filter(|&&x| x == i).count(), w);
        }
        // Over many cycles the proportions stay exact and no run of one size exceeds two.
        let long: Vec<usize> = order.iter().copied().cycle().take(12 * 1000).collect();
        assert_eq!(long.iter().filter(|&&x| x == 0).count(), 7000);
        assert_eq!(long.iter().filter(|&&x| x == 2).count(), 1000);
        let max_run = long
            .chunk_by(|a, b| a == b)
            .map(<[usize]>::len)
            .max()
            .unwrap();
        assert!(max_run <= 2, "{order:?}");
    }

    #[test]
    fn a_single_size_and_two_sizes_interleave() {
        assert_eq!(interleave(&[1]), vec![0]);
        assert_eq!(interleave(&[1, 1]), vec![0, 1]);
        assert_eq!(interleave(&[]), Vec::<usize>::new());
    }
}
