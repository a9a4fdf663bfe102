//! linerate's extension of iperf3's protocol: one `"linerate"` key in the parameters, which
//! iperf3 servers ignore, and a [`State::LinerateHello`](crate::protocol::State) answer that
//! only a linerate server sends (and only to a client that sent the key). A client that gets
//! `CREATE_STREAMS` without a hello first is talking to iperf3 or a clone of it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// The client's `"linerate"` parameter object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Extension {
    /// Extension version ([`crate::EXTENSION_VERSION`]).
    pub version: u32,
    /// The test mode.
    #[serde(default)]
    pub mode: Mode,
    /// The sending engine's version.
    #[serde(default)]
    pub engine: String,
}

impl Extension {
    /// This engine's extension for `mode`.
    pub fn new(mode: Mode) -> Extension {
        Extension {
            version: crate::EXTENSION_VERSION,
            mode,
            engine: crate::ENGINE_VERSION.to_owned(),
        }
    }

    /// Reads the key; `Err` names what is wrong, so the server can refuse with it.
    pub fn from_json(v: &Value) -> Result<Extension, String> {
        serde_json::from_value(v.clone()).map_err(|e| format!("bad \"linerate\" key: {e}"))
    }
}

/// The server's answer to the extension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    /// Extension version the server speaks.
    pub version: u32,
    /// The server's engine version.
    #[serde(default)]
    pub engine: String,
    /// Whether the test is accepted.
    pub accepted: bool,
    /// Why not, when refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Hello {
    /// An acceptance.
    pub fn accept() -> Hello {
        Hello {
            version: crate::EXTENSION_VERSION,
            engine: crate::ENGINE_VERSION.to_owned(),
            accepted: true,
            error: None,
        }
    }

    /// A refusal with a reason.
    pub fn refuse(reason: impl Into<String>) -> Hello {
        Hello {
            accepted: false,
            error: Some(reason.into()),
            ..Hello::accept()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_round_trips_and_rejects_unknown_modes() {
        let e = Extension::new(Mode::Stream);
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["mode"], "stream");
        assert_eq!(Extension::from_json(&v).unwrap(), e);
        let bad = serde_json::json!({"version": 1, "mode": "warp"});
        assert!(Extension::from_json(&bad).unwrap_err().contains("warp"));
    }
}
