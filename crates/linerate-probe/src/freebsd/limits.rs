//! Network memory limits: mbuf clusters and socket buffer ceilings.
//!
//! `kern.ipc.nmbclusters` bounds the 2 KiB clusters every received frame lands in (a router
//! that runs out drops in the driver); `kern.ipc.maxsockbuf` bounds any socket buffer and
//! `net.inet.tcp.{send,recv}buf_max` the auto-tuned TCP ones, which together cap a single TCP
//! stream at window ÷ RTT.

use linerate_units::ByteSize;

use super::ParseError;
use super::sysctl::SysctlDump;
use crate::Probed;

/// The limits, each known or unknown with the reason.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NetworkLimits {
    /// `kern.ipc.nmbclusters`: the maximum number of mbuf clusters.
    pub mbuf_clusters: Probed<u64>,
    /// `kern.ipc.maxsockbuf`: the largest socket buffer any socket may get.
    pub max_socket_buffer: Probed<ByteSize>,
    /// `net.inet.tcp.sendbuf_max`: ceiling of send-buffer auto-tuning.
    pub tcp_sendbuf_max: Probed<ByteSize>,
    /// `net.inet.tcp.recvbuf_max`: ceiling of receive-buffer auto-tuning.
    pub tcp_recvbuf_max: Probed<ByteSize>,
    /// `net.inet.tcp.sendspace`: initial send buffer.
    pub tcp_sendspace: Probed<ByteSize>,
    /// `net.inet.tcp.recvspace`: initial receive buffer.
    pub tcp_recvspace: Probed<ByteSize>,
    /// `net.inet.tcp.cc.algorithm`: the default congestion control.
    pub tcp_congestion_control: Probed<String>,
}

fn missing<T>(name: &str) -> Probed<T> {
    Probed::unknown(format!("{name} is not in the input"))
}

fn bytes(dump: &SysctlDump, name: &str) -> Result<Probed<ByteSize>, ParseError> {
    Ok(match dump.u64(name)? {
        Some(n) => Probed::Value(ByteSize::from_bytes(n)),
        None => missing(name),
    })
}

impl NetworkLimits {
    /// Reads the limits. Present but non-numeric values are errors with their line.
    pub fn from_sysctl(dump: &SysctlDump) -> Result<Self, ParseError> {
        Ok(NetworkLimits {
            mbuf_clusters: match dump.u64("kern.ipc.nmbclusters")? {
                Some(n) => Probed::Value(n),
                None => missing("kern.ipc.nmbclusters"),
            },
            max_socket_buffer: bytes(dump, "kern.ipc.maxsockbuf")?,
            tcp_sendbuf_max: bytes(dump, "net.inet.tcp.sendbuf_max")?,
            tcp_recvbuf_max: bytes(dump, "net.inet.tcp.recvbuf_max")?,
            tcp_sendspace: bytes(dump, "net.inet.tcp.sendspace")?,
            tcp_recvspace: bytes(dump, "net.inet.tcp.recvspace")?,
            tcp_congestion_control: match dump.get("net.inet.tcp.cc.algorithm") {
                Some(a) => Probed::Value(a.trim().to_string()),
                None => missing("net.inet.tcp.cc.algorithm"),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(text: &str) -> NetworkLimits {
        NetworkLimits::from_sysctl(&SysctlDump::parse(text).unwrap()).unwrap()
    }

    #[test]
    fn epyc_tcp_buffers_and_congestion_control() {
        let l = limits(include_str!(
            "../../testdata/freebsd/ocochard-epyc7502p-igb/sysctl-net-inet-tcp.txt"
        ));
        assert_eq!(l.tcp_sendbuf_max, Probed::Value(ByteSize::from_mib(2)));
        assert_eq!(l.tcp_recvbuf_max, Probed::Value(ByteSize::from_mib(2)));
        assert_eq!(l.tcp_sendspace, Probed::Value(ByteSize::from_kib(32)));
        assert_eq!(l.tcp_recvspace, Probed::Value(ByteSize::from_kib(64)));
        assert_eq!(l.tcp_congestion_control, Probed::Value("cubic".to_string()));
        // `sysctl net.inet.tcp` does not include kern.ipc.*.
        assert!(
            l.max_socket_buffer
                .reason()
                .unwrap()
                .contains("kern.ipc.maxsockbuf")
        );
        assert!(l.mbuf_clusters.reason().is_some());
    }

    #[test]
    fn unbound_reporter_maxsockbuf() {
        let l = limits(include_str!(
            "../../testdata/freebsd/unbound-1360/sysctl-a-grep-maxsockbuf.txt"
        ));
        assert_eq!(l.max_socket_buffer, Probed::Value(ByteSize::from_mib(2)));
    }

    #[test]
    fn mbuf_clusters_and_bad_values() {
        let l = limits("kern.ipc.nmbclusters: 1000000\n");
        assert_eq!(l.mbuf_clusters, Probed::Value(1_000_000));
        let dump = SysctlDump::parse("hw.ncpu: 1\nkern.ipc.maxsockbuf: 2M\n").unwrap();
        let e = NetworkLimits::from_sysctl(&dump).unwrap_err();
        assert_eq!(
            e.to_string(),
            "sysctl output, line 2: kern.ipc.maxsockbuf \"2M\" is not a number"
        );
    }
}
