//! What the client is asked to do: the leaf the engine's other modules build on (protocol,
//! transport, direction, modes and their options, socket options).

use std::net::IpAddr;
use std::time::Duration;

use linerate_units::{BitRate, ByteSize};
use serde::{Deserialize, Serialize};

mod mode;

pub use linerate_iperf3::linerate::Direction;
pub use mode::{ClientModeOptions, Mode, ModeOptions, RrSize, ZeroCopy};

/// iperf3's default port.
pub const DEFAULT_PORT: u16 = 5201;

/// Transport of the data streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// TCP streams.
    Tcp,
    /// UDP streams.
    Udp,
}

impl Protocol {
    /// iperf3's name for it in `--json` (`"TCP"`, `"UDP"`).
    pub fn iperf3_name(self) -> &'static str {
        match self {
            Protocol::Tcp => "TCP",
            Protocol::Udp => "UDP",
        }
    }
}

/// Which address family to use when a name resolves to both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Family {
    /// Whatever resolves first.
    #[default]
    Any,
    /// IPv4 only.
    V4,
    /// IPv6 only.
    V6,
}

/// Socket options common to client and server streams.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SocketOptions {
    /// SO_SNDBUF/SO_RCVBUF.
    pub window: Option<ByteSize>,
    /// TCP_MAXSEG.
    pub mss: Option<u32>,
    /// TCP_CONGESTION.
    pub congestion: Option<String>,
    /// IP_TOS / IPV6_TCLASS.
    pub tos: Option<u8>,
    /// SO_BINDTODEVICE.
    pub bind_dev: Option<String>,
    /// TCP_NODELAY.
    pub nodelay: bool,
}

/// A client run.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Server host name or address.
    pub host: String,
    /// Server port.
    pub port: u16,
    /// Address family preference.
    pub family: Family,
    /// Local address to bind.
    pub bind: Option<IpAddr>,
    /// TCP or UDP.
    pub protocol: Protocol,
    /// Test mode (stream; the others need a linerate server).
    pub mode: Mode,
    /// Test length (ignored when `bytes` or `blocks` is set).
    pub duration: Duration,
    /// Bytes to send per direction.
    pub bytes: Option<ByteSize>,
    /// Blocks to send per direction.
    pub blocks: Option<u64>,
    /// Streams per direction.
    pub parallel: u32,
    /// The server sends.
    pub reverse: bool,
    /// Both sides send.
    pub bidir: bool,
    /// Write size (TCP) or datagram payload (UDP).
    pub len: Option<ByteSize>,
    /// Target rate per stream (UDP default 1 Mbit/s, as iperf3).
    pub bitrate: Option<BitRate>,
    /// Seconds omitted at the start.
    pub omit: Duration,
    /// Interval between reports (zero: none).
    pub interval: Duration,
    /// Socket options.
    pub sock: SocketOptions,
    /// Ask the server for its output.
    pub get_server_output: bool,
    /// Connection and handshake timeout.
    pub connect_timeout: Duration,
    /// Options of the pps/rr/crr modes and `--affinity`.
    pub modes: ClientModeOptions,
    /// iperf3's RSA authentication token (`protocol::auth::client_token`), sent as
    /// `"authtoken"` with the parameters.
    pub authtoken: Option<String>,
    /// How often each TCP stream's `TCP_INFO` is sampled for the evidence, per second, on
    /// this side and (asked in the extension) a linerate server's; 0: no evidence.
    pub evidence_hz: u32,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            host: "127.0.0.1".into(),
            port: DEFAULT_PORT,
            family: Family::Any,
            bind: None,
            protocol: Protocol::Tcp,
            mode: Mode::Stream,
            duration: Duration::from_secs(10),
            bytes: None,
            blocks: None,
            parallel: 1,
            reverse: false,
            bidir: false,
            len: None,
            bitrate: None,
            omit: Duration::ZERO,
            interval: Duration::from_secs(1),
            sock: SocketOptions::default(),
            get_server_output: false,
            connect_timeout: Duration::from_secs(10),
            modes: ClientModeOptions::default(),
            authtoken: None,
            evidence_hz: DEFAULT_EVIDENCE_HZ,
        }
    }
}

/// The default evidence sampling rate, per second ([`ClientConfig::evidence_hz`]).
pub const DEFAULT_EVIDENCE_HZ: u32 = 100;
/// The highest evidence sampling rate a client may ask and a server grants, per second.
pub const MAX_EVIDENCE_HZ: u32 = 1000;

/// The default write size for TCP (iperf3's 128 KiB).
pub const DEFAULT_TCP_LEN: u64 = 128 * 1024;
/// The default datagram payload for UDP (fits a 1500-byte MTU).
pub const DEFAULT_UDP_LEN: u64 = 1448;
/// The default UDP rate per stream (iperf3's 1 Mbit/s).
pub const DEFAULT_UDP_RATE: u64 = 1_000_000;
/// Largest UDP payload.
pub const MAX_UDP_LEN: u64 = 65_507;
/// Largest TCP write size accepted.
pub const MAX_TCP_LEN: u64 = 16 * 1024 * 1024;
