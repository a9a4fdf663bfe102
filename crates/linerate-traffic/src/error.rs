//! The engine's errors. Each variant names the peer, value or step that went wrong, so the
//! binary can print it as one line.

use std::io;

/// What can go wrong in a test.
#[derive(Debug, thiserror::Error)]
pub enum TrafficError {
    /// The host name did not resolve.
    #[error("cannot resolve {host}: {source}")]
    Resolve {
        /// The name given.
        host: String,
        /// The resolver's error.
        source: io::Error,
    },
    /// The connection to the server failed (refused, unreachable, timed out).
    #[error("cannot connect to {addr}: {reason}")]
    Connect {
        /// The address tried.
        addr: String,
        /// A short human reason.
        reason: String,
    },
    /// A socket operation failed.
    #[error("{what}: {source}")]
    Socket {
        /// What was being done.
        what: String,
        /// The OS error.
        source: io::Error,
    },
    /// The peer closed the control connection.
    #[error("{peer} closed the control connection while {during}")]
    Closed {
        /// The peer.
        peer: String,
        /// The protocol step.
        during: &'static str,
    },
    /// The connection was made but the peer never spoke: not an iperf3 or linerate server, or
    /// a firewall or proxy that accepts connections on the real host's behalf.
    #[error(
        "connected, but the server said nothing: timed out after {secs:.1} s waiting for it \
         (no iperf3 or linerate server there, or a firewall or proxy accepted the connection on \
         its behalf)"
    )]
    Silent {
        /// The server.
        peer: String,
        /// The limit.
        secs: f64,
    },
    /// A read or the whole step took too long.
    #[error("timed out after {secs:.1} s while {during}")]
    Timeout {
        /// The protocol step.
        during: &'static str,
        /// The limit.
        secs: f64,
    },
    /// A JSON message announced a length above the limit.
    #[error("a control message announced {len} bytes, above the {max}-byte limit")]
    MessageTooLong {
        /// The announced length.
        len: u64,
        /// The limit.
        max: usize,
    },
    /// A JSON message did not parse.
    #[error("a control message is not valid JSON: {0}")]
    BadJson(String),
    /// A state byte that the current step does not expect.
    #[error("unexpected control byte {byte:#04x} while {during}")]
    UnexpectedState {
        /// The byte.
        byte: u8,
        /// The protocol step.
        during: &'static str,
    },
    /// The parameters are invalid or outside the server's limits.
    #[error("invalid test parameters: {0}")]
    BadParams(String),
    /// The server said "access denied" (an iperf3 server that is busy with another test).
    #[error("the server at {peer} is busy running a test (access denied); try again later")]
    Busy {
        /// The server.
        peer: String,
    },
    /// The server refused or aborted the test with an iperf3 error code.
    #[error("the server at {peer} reported an error: {text} (iperf3 error {code}, errno {errno})")]
    ServerError {
        /// The server.
        peer: String,
        /// iperf3's error code.
        code: i32,
        /// Our reading of the code.
        text: &'static str,
        /// The server's errno.
        errno: i32,
    },
    /// A linerate server refused the test with a reason.
    #[error("the server at {peer} refused the test: {reason}")]
    Refused {
        /// The server.
        peer: String,
        /// Its reason.
        reason: String,
    },
    /// The server ended the test early.
    #[error("the server at {peer} terminated the test")]
    ServerTerminated {
        /// The server.
        peer: String,
    },
    /// A linerate-only feature was asked of a peer that is not linerate.
    #[error(
        "the server at {peer} is not a linerate server (iperf3 or compatible), so it cannot do \
         {feature}; run `linerate server` there"
    )]
    PeerLacksFeature {
        /// The server.
        peer: String,
        /// The feature asked for.
        feature: String,
    },
    /// The run was interrupted locally.
    #[error("interrupted")]
    Interrupted,
    /// The test moved data faster than the server's `--server-bitrate-limit`.
    #[error(
        "the test moved {bps:.0} bit/s over the last {secs:.0} s, more than the server's \
         limit of {limit} bit/s (--server-bitrate-limit)"
    )]
    RateLimit {
        /// The rate measured (bits per second, all streams).
        bps: f64,
        /// The limit.
        limit: u64,
        /// The averaging interval.
        secs: f64,
    },
}

impl TrafficError {
    /// Wraps an OS error with what was being done.
    pub fn socket(what: impl Into<String>, source: io::Error) -> TrafficError {
        TrafficError::Socket {
            what: what.into(),
            source,
        }
    }

    /// Maps an I/O error on the control channel to a closed/timeout/socket error.
    pub fn control(err: io::Error, peer: &str, during: &'static str, timeout_secs: f64) -> Self {
        match err.kind() {
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionAborted => TrafficError::Closed {
                peer: peer.to_owned(),
                during,
            },
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => TrafficError::Timeout {
                during,
                secs: timeout_secs,
            },
            _ => TrafficError::Socket {
                what: format!("control connection to {peer} while {during}"),
                source: err,
            },
        }
    }
}

/// A human reading of iperf3's error codes that a server sends.
pub fn iperf_error_text(code: i32) -> &'static str {
    match code {
        5 => "test duration too long",
        6 => "too many parallel streams",
        7 => "block size too large",
        8 => "socket buffer size too large",
        9 => "invalid report interval",
        10 => "MSS too large",
        13 => "not implemented",
        100..=112 => "the server could not set up the test",
        27 => "the total rate asked or moved is above the server's limit",
        114 => "the server could not read the parameters",
        142 => {
            "authentication failed (--username, --rsa-public-key-path, IPERF3_PASSWORD; \
             --use-pkcs1-padding for an iperf3 server before 3.17)"
        }
        _ => "see iperf3's error list",
    }
}
