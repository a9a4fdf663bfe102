//! iperf3's control protocol: state bytes, cookies, length-prefixed JSON messages, test
//! parameters and exchanged results, plus linerate's extension key and its frame-counter
//! session ([`frames`]).

pub mod auth;
pub mod control;
pub mod cookie;
pub mod extension;
pub mod frames;
pub mod message;
pub mod params;
pub mod results;
pub mod state;

pub use control::{Control, Incoming};
pub use cookie::Cookie;
pub use extension::Extension;
pub use message::{
    MAX_PARAMS_LEN, MAX_RESULTS_LEN, read_json, read_state, write_json, write_state,
};
pub use params::TestParams;
pub use results::{PeerResults, PeerStreamResult};
pub use state::State;

pub use crate::config::DEFAULT_PORT;

/// The datagram a UDP client sends to open a stream (`"9876"`).
pub const UDP_CONNECT_MSG: [u8; 4] = *b"9876";
/// The server's answer (`"6789"`).
pub const UDP_CONNECT_REPLY: [u8; 4] = *b"6789";
/// The answer of old iperf3 servers: 987654321 in host byte order (little-endian here).
pub const UDP_CONNECT_REPLY_OLD: [u8; 4] = 987_654_321u32.to_le_bytes();

/// iperf3 error codes sent after [`State::ServerError`] (iperf3 3.x numbering).
pub mod ierr {
    /// Test duration too long.
    pub const DURATION: i32 = 5;
    /// Too many parallel streams.
    pub const NUM_STREAMS: i32 = 6;
    /// Block size too large.
    pub const BLOCK_SIZE: i32 = 7;
    /// Not implemented.
    pub const UNIMPLEMENTED: i32 = 13;
    /// The total rate asked or moved is above the server's limit (IETOTALRATE).
    pub const TOTAL_RATE: i32 = 27;
    /// Test authorization failed (IEAUTHTEST).
    pub const AUTH_TEST: i32 = 142;
    /// Parameters could not be received or read.
    pub const RECV_PARAMS: i32 = 114;
}
