//! The test parameters the client sends after `PARAM_EXCHANGE`, in iperf3's keys.
//!
//! iperf3 treats a boolean key as set when it is present at all, so booleans are written only
//! when true.

use serde_json::{Map, Value, json};

use crate::config::Protocol;
use crate::protocol::Extension;

/// One test's parameters as both sides agree on them.
#[derive(Debug, Clone, PartialEq)]
pub struct TestParams {
    /// TCP or UDP.
    pub protocol: Protocol,
    /// Seconds at the start left out of the results.
    pub omit: f64,
    /// Test length in seconds (ignored when `bytes` or `blocks` is set).
    pub time: f64,
    /// Bytes to send (0: not byte-bounded).
    pub bytes: u64,
    /// Blocks to send (0: not block-bounded).
    pub blocks: u64,
    /// Streams per direction.
    pub parallel: u32,
    /// The server sends.
    pub reverse: bool,
    /// Both send.
    pub bidirectional: bool,
    /// Socket buffer size in bytes.
    pub window: Option<u64>,
    /// Bytes per write (TCP) or datagram payload (UDP).
    pub len: u64,
    /// Target rate per stream in bit/s (0: unlimited).
    pub bandwidth: u64,
    /// Pacing timer in microseconds.
    pub pacing_timer: u64,
    /// TCP maximum segment size.
    pub mss: Option<u32>,
    /// TCP_NODELAY on data streams.
    pub nodelay: bool,
    /// IP TOS byte.
    pub tos: Option<u8>,
    /// TCP congestion control algorithm.
    pub congestion: Option<String>,
    /// The client wants the server's output in the results.
    pub get_server_output: bool,
    /// UDP sequence numbers are 64-bit.
    pub udp_counters_64bit: bool,
    /// The client's version string.
    pub client_version: Option<String>,
    /// linerate's extension key, when the client is linerate.
    pub extension: Option<Extension>,
}

impl Default for TestParams {
    fn default() -> Self {
        TestParams {
            protocol: Protocol::Tcp,
            omit: 0.0,
            time: 10.0,
            bytes: 0,
            blocks: 0,
            parallel: 1,
            reverse: false,
            bidirectional: false,
            window: None,
            len: 128 * 1024,
            bandwidth: 0,
            pacing_timer: 1000,
            mss: None,
            nodelay: false,
            tos: None,
            congestion: None,
            get_server_output: false,
            udp_counters_64bit: false,
            client_version: None,
            extension: None,
        }
    }
}

fn flag(m: &Map<String, Value>, key: &str) -> bool {
    match m.get(key) {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|x| x != 0.0),
        Some(_) => true,
    }
}

fn number(m: &Map<String, Value>, key: &str) -> Result<Option<f64>, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
            _ => Err(format!("\"{key}\" must be a non-negative number, got {n}")),
        },
        Some(other) => Err(format!("\"{key}\" must be a number, got {other}")),
    }
}

fn whole(m: &Map<String, Value>, key: &str, max: u64) -> Result<Option<u64>, String> {
    match number(m, key)? {
        None => Ok(None),
        Some(x) if x <= max as f64 => Ok(Some(x as u64)),
        Some(x) => Err(format!("\"{key}\" = {x} is above {max}")),
    }
}

fn text(m: &Map<String, Value>, key: &str) -> Option<String> {
    m.get(key).and_then(Value::as_str).map(str::to_owned)
}

impl TestParams {
    /// Reads the client's parameters; `Err` names the offending key.
    pub fn from_json(v: &Value) -> Result<TestParams, String> {
        let m = v
            .as_object()
            .ok_or("the parameters are not a JSON object")?;
        let protocol = if flag(m, "udp") {
            Protocol::Udp
        } else if flag(m, "sctp") {
            return Err("SCTP is not supported".to_owned());
        } else {
            Protocol::Tcp
        };
        let d = TestParams::default();
        let extension = match m.get("linerate") {
            None | Some(Value::Null) => None,
            Some(e) => Some(Extension::from_json(e)?),
        };
        Ok(TestParams {
            protocol,
            omit: number(m, "omit")?.unwrap_or(0.0),
            time: number(m, "time")?.unwrap_or(d.time),
            bytes: whole(m, "num", u64::MAX / 2)?.unwrap_or(0),
            blocks: whole(m, "blockcount", u64::MAX / 2)?.unwrap_or(0),
            parallel: whole(m, "parallel", u64::from(u32::MAX))?.unwrap_or(1) as u32,
            reverse: flag(m, "reverse"),
            bidirectional: flag(m, "bidirectional"),
            window: whole(m, "window", u64::from(u32::MAX))?.filter(|w| *w > 0),
            len: whole(m, "len", u64::from(u32::MAX))?
                .filter(|l| *l > 0)
                .unwrap_or(match protocol {
                    Protocol::Tcp => d.len,
                    Protocol::Udp => 1460,
                }),
            bandwidth: whole(m, "bandwidth", u64::MAX / 2)?.unwrap_or(0),
            pacing_timer: whole(m, "pacing_timer", 10_000_000)?.unwrap_or(d.pacing_timer),
            mss: whole(m, "MSS", u64::from(u32::MAX))?
                .filter(|x| *x > 0)
                .map(|x| x as u32),
            nodelay: flag(m, "nodelay"),
            tos: whole(m, "TOS", 255)?.filter(|t| *t > 0).map(|t| t as u8),
            congestion: text(m, "congestion"),
            get_server_output: flag(m, "get_server_output"),
            udp_counters_64bit: flag(m, "udp_counters_64bit"),
            client_version: text(m, "client_version"),
            extension,
        })
    }

    /// The parameters as the client sends them.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        match self.protocol {
            Protocol::Tcp => m.insert("tcp".into(), json!(true)),
            Protocol::Udp => m.insert("udp".into(), json!(true)),
        };
        // iperf3 3.12 reads these with cJSON's valueint: whole numbers.
        m.insert("omit".into(), json!(self.omit.round() as u64));
        m.insert("time".into(), json!(self.time.ceil() as u64));
        m.insert("num".into(), json!(self.bytes));
        m.insert("blockcount".into(), json!(self.blocks));
        m.insert("parallel".into(), json!(self.parallel));
        if self.reverse {
            m.insert("reverse".into(), json!(true));
        }
        if self.bidirectional {
            m.insert("bidirectional".into(), json!(true));
        }
        if let Some(w) = self.window {
            m.insert("window".into(), json!(w));
        }
        m.insert("len".into(), json!(self.len));
        if self.bandwidth > 0 {
            m.insert("bandwidth".into(), json!(self.bandwidth));
        }
        m.insert("pacing_timer".into(), json!(self.pacing_timer));
        if let Some(mss) = self.mss {
            m.insert("MSS".into(), json!(mss));
        }
        if self.nodelay {
            m.insert("nodelay".into(), json!(true));
        }
        if let Some(tos) = self.tos {
            m.insert("TOS".into(), json!(tos));
        }
        if let Some(cc) = &self.congestion {
            m.insert("congestion".into(), json!(cc));
        }
        if self.get_server_output {
            m.insert("get_server_output".into(), json!(1));
        }
        if self.udp_counters_64bit {
            m.insert("udp_counters_64bit".into(), json!(1));
        }
        if let Some(v) = &self.client_version {
            m.insert("client_version".into(), json!(v));
        }
        if let Some(e) = &self.extension {
            m.insert(
                "linerate".into(),
                serde_json::to_value(e).unwrap_or(Value::Null),
            );
        }
        Value::Object(m)
    }

    /// Number of streams the client opens: `parallel`, doubled for `--bidir`.
    pub fn total_streams(&self) -> u64 {
        let p = u64::from(self.parallel);
        if self.bidirectional { 2 * p } else { p }
    }

    /// Whether the test ends by a byte or block count rather than by time.
    pub fn count_bounded(&self) -> bool {
        self.bytes > 0 || self.blocks > 0
    }

    /// The byte budget of each direction, when count-bounded.
    pub fn byte_budget(&self) -> Option<u64> {
        if self.bytes > 0 {
            Some(self.bytes)
        } else if self.blocks > 0 {
            Some(self.blocks.saturating_mul(self.len))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iperf3_312_params_parse() {
        let v: Value = serde_json::from_str(
            r#"{"tcp":true,"omit":0,"time":2,"num":0,"blockcount":0,"parallel":2,
                "reverse":true,"len":131072,"pacing_timer":1000,"client_version":"3.12"}"#,
        )
        .unwrap();
        let p = TestParams::from_json(&v).unwrap();
        assert_eq!(p.protocol, Protocol::Tcp);
        assert_eq!(p.parallel, 2);
        assert!(p.reverse);
        assert!(!p.bidirectional);
        assert_eq!(p.time, 2.0);
        assert_eq!(p.client_version.as_deref(), Some("3.12"));
        assert_eq!(p.extension, None);
    }

    #[test]
    fn round_trip_keeps_everything() {
        let p = TestParams {
            protocol: Protocol::Udp,
            omit: 1.0,
            time: 3.0,
            parallel: 4,
            bidirectional: true,
            window: Some(1 << 20),
            len: 1200,
            bandwidth: 50_000_000,
            mss: Some(1400),
            tos: Some(0xb8),
            congestion: Some("cubic".into()),
            udp_counters_64bit: true,
            extension: Some(Extension::new(crate::protocol::extension::Mode::Stream)),
            ..TestParams::default()
        };
        let back = TestParams::from_json(&p.to_json()).unwrap();
        assert_eq!(back, p);
        assert!(
            p.to_json().get("reverse").is_none(),
            "false flags are not sent"
        );
    }

    #[test]
    fn bad_values_name_the_key() {
        let v = serde_json::json!({"tcp": true, "parallel": "many"});
        assert!(TestParams::from_json(&v).unwrap_err().contains("parallel"));
        let v = serde_json::json!({"tcp": true, "time": -3});
        assert!(TestParams::from_json(&v).unwrap_err().contains("time"));
        assert!(TestParams::from_json(&serde_json::json!([1])).is_err());
    }
}
