//! The test modes and their options: what travels in the extension key and what the client
//! keeps for itself.

use linerate_units::ByteSize;
use serde::{Deserialize, Serialize};

use crate::affinity::CpuList;

/// What kind of test the client asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Bulk TCP or UDP streams, as iperf3 does. An iperf3 peer can do this.
    #[default]
    Stream,
    /// Small UDP datagrams as fast as possible (linerate only).
    Pps,
    /// Request/response transactions (linerate only).
    Rr,
    /// Connect, request, response, close (linerate only).
    Crr,
}

impl Mode {
    /// Whether an iperf3 server can run this mode.
    pub fn iperf3_can_do(self) -> bool {
        self == Mode::Stream
    }

    /// The mode's name as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Stream => "stream",
            Mode::Pps => "pps",
            Mode::Rr => "rr",
            Mode::Crr => "crr",
        }
    }
}

/// Request and response sizes of a transaction (`--rr-size REQ/RESP`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RrSize {
    /// Bytes the client sends.
    pub request: u64,
    /// Bytes the server answers.
    pub response: u64,
}

impl Default for RrSize {
    fn default() -> Self {
        RrSize {
            request: 1,
            response: 1,
        }
    }
}

impl std::str::FromStr for RrSize {
    type Err = String;

    fn from_str(s: &str) -> Result<RrSize, String> {
        let (a, b) = s.split_once('/').ok_or_else(|| {
            format!("\"{s}\" is not REQ/RESP (e.g. 1/1, 64/1KiB: request and response sizes)")
        })?;
        let size = |x: &str, what: &str| -> Result<u64, String> {
            let v: ByteSize = x
                .trim()
                .parse()
                .map_err(|e| format!("{what} size \"{x}\" in \"{s}\": {e}"))?;
            if v.bytes() == 0 {
                return Err(format!("{what} size in \"{s}\" must be at least 1 byte"));
            }
            Ok(v.bytes())
        };
        Ok(RrSize {
            request: size(a, "request")?,
            response: size(b, "response")?,
        })
    }
}

impl std::fmt::Display for RrSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.request, self.response)
    }
}

/// Whether bulk TCP streams move their bytes without the copy (`--zerocopy`): the receiver
/// maps received pages (`TCP_ZEROCOPY_RECEIVE`), the sender pins its pages (`MSG_ZEROCOPY`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ZeroCopy {
    /// The copy path (iperf3's).
    #[default]
    Off,
    /// The default on Linux: the sender sends from an in-memory file (`sendfile`: no copy into
    /// the socket); the receiver maps received pages while at least half of the first bytes
    /// map.
    Auto,
    /// The sender pins its own pages (`MSG_ZEROCOPY`), the receiver maps whatever share maps
    /// (a refusal still falls back).
    On,
}

impl ZeroCopy {
    /// The option's word.
    pub fn name(self) -> &'static str {
        match self {
            ZeroCopy::Off => "off",
            ZeroCopy::Auto => "auto",
            ZeroCopy::On => "on",
        }
    }
}

impl std::str::FromStr for ZeroCopy {
    type Err = String;

    fn from_str(s: &str) -> Result<ZeroCopy, String> {
        match s {
            "off" => Ok(ZeroCopy::Off),
            "auto" => Ok(ZeroCopy::Auto),
            "on" => Ok(ZeroCopy::On),
            _ => Err(format!("\"{s}\" is not off, auto or on")),
        }
    }
}

/// Options of the linerate-only modes, carried in the extension key.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModeOptions {
    /// rr/crr request and response sizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rr_size: Option<RrSize>,
    /// pps: simple IMIX instead of one size.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub imix: bool,
    /// CPUs the server pins its workers to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpus: Option<CpuList>,
    /// pps: send one datagram per message instead of using UDP GSO.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_gso: bool,
    /// pps: the receivers leave UDP_GRO off even when the sender uses GSO.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_gro: bool,
    /// pps: busy polling on the receiving sockets (either side's), µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_poll_us: Option<u32>,
    /// stream over TCP: zero-copy send and receive on both sides (absent: off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zerocopy: Option<ZeroCopy>,
}

impl ModeOptions {
    /// Whether nothing is set (the key is then left out of the parameters).
    pub fn is_default(&self) -> bool {
        *self == ModeOptions::default()
    }
}

/// The client's own options that never travel.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientModeOptions {
    /// Options sent to the server.
    pub shared: ModeOptions,
    /// CPUs the client pins its workers to.
    pub client_cpus: Option<CpuList>,
}
