//! linerate's extension of iperf3's protocol: one `"linerate"` key in the parameters, which
//! iperf3 servers ignore, and a [`State::LinerateHello`](crate::protocol::State) answer that
//! only a linerate server sends (and only to a client that sent the key). A client that gets
//! `CREATE_STREAMS` without a hello first is talking to iperf3 or a clone of it.

use linerate_iperf3::evidence::Evidence;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::config::Mode;
use crate::config::ModeOptions;

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
    /// Options of the pps/rr/crr modes and the extras (see [`crate::modes`]).
    #[serde(default, skip_serializing_if = "ModeOptions::is_default")]
    pub options: ModeOptions,
    /// The server samples its streams' `TCP_INFO` this often per second and returns its
    /// evidence with its results ([`ResultsExtension::evidence`]); 0 or absent (an older
    /// client): it samples nothing.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub evidence_hz: u32,
    /// The client asks for a frame-counter session ([`super::frames`]) instead of a test with
    /// streams; a server started without `--allow-frame-counter` refuses it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub frame_counter: bool,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde passes a reference
fn is_false(b: &bool) -> bool {
    !*b
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde passes a reference
fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Extension {
    /// This engine's extension for `mode`.
    pub fn new(mode: Mode) -> Extension {
        Extension {
            version: crate::EXTENSION_VERSION,
            mode,
            engine: crate::ENGINE_VERSION.to_owned(),
            options: ModeOptions::default(),
            evidence_hz: 0,
            frame_counter: false,
        }
    }

    /// Reads the key; `Err` names what is wrong, so the server can refuse with it.
    pub fn from_json(v: &Value) -> Result<Extension, String> {
        serde_json::from_value(v.clone()).map_err(|e| format!("bad \"linerate\" key: {e}"))
    }
}

/// linerate's key in a side's results (`EXCHANGE_RESULTS`): what iperf3's keys cannot say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultsExtension {
    /// Extension version ([`crate::EXTENSION_VERSION`]).
    #[serde(default)]
    pub version: u32,
    /// The sending engine's version.
    #[serde(default)]
    pub engine: String,
    /// Where this side's workers ran.
    #[serde(default)]
    pub threads: Vec<linerate_iperf3::linerate::ThreadReport>,
    /// Datagrams on this side's receiving ports that were not the test's.
    #[serde(default)]
    pub foreign_datagrams: u64,
    /// How this side's pps receivers took their datagrams in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive_path: Option<linerate_iperf3::linerate::ReceivePath>,
    /// How this side's TCP streams moved their bytes with `--zerocopy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zerocopy: Option<linerate_iperf3::linerate::ZeroCopyReport>,
    /// What this side sampled during the test, when the client asked
    /// ([`Extension::evidence_hz`]). An object that does not read is left out (the client
    /// then says the server's side is missing) rather than spoiling the results.
    #[serde(
        default,
        deserialize_with = "lenient_evidence",
        skip_serializing_if = "Option::is_none"
    )]
    pub evidence: Option<Evidence>,
}

fn lenient_evidence<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Evidence>, D::Error> {
    Ok(serde_json::from_value(Value::deserialize(d)?).ok())
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
    /// The port of the test's crr transactions (see [`crate::modes`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_port: Option<u16>,
    /// The server runs the frame-counter session asked for (a server that does not know it
    /// leaves this out, and would run a plain test instead: the client must not go on).
    #[serde(default, skip_serializing_if = "is_false")]
    pub frame_counter: bool,
}

impl Hello {
    /// An acceptance.
    pub fn accept() -> Hello {
        Hello {
            version: crate::EXTENSION_VERSION,
            engine: crate::ENGINE_VERSION.to_owned(),
            accepted: true,
            error: None,
            data_port: None,
            frame_counter: false,
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
