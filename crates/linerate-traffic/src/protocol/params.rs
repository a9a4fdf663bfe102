//! The test parameters the client sends after `PARAM_EXCHANGE`: read and written in iperf3's
//! keys through the schema's [`Params`] (which knows that iperf3 treats a boolean key as set
//! when it is present at all), checked and defaulted here.

use linerate_iperf3::exchange::Params;
use serde_json::{Number, Value};

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

/// A parameter's number as a non-negative float (the schema checked its sign).
fn number(n: Option<&Number>) -> Option<f64> {
    n.and_then(Number::as_f64)
}

/// A whole number of at most `max`; `Err` names the key.
fn whole(n: Option<&Number>, key: &str, max: u64) -> Result<Option<u64>, String> {
    match n {
        None => Ok(None),
        Some(n) => match n.as_u64() {
            Some(x) if x <= max => Ok(Some(x)),
            Some(x) => Err(format!("\"{key}\" = {x} is above {max}")),
            None => match n.as_f64() {
                // A float (iperf3 writes whole numbers; others may not) is truncated, as before.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                Some(x) if x <= max as f64 => Ok(Some(x as u64)),
                _ => Err(format!("\"{key}\" = {n} is above {max}")),
            },
        },
    }
}

impl TestParams {
    /// Reads the client's parameters; `Err` names the offending key.
    pub fn from_json(v: &Value) -> Result<TestParams, String> {
        let m = Params::<Extension>::from_value(v).map_err(|e| {
            if e.place.starts_with("linerate") {
                format!("bad \"linerate\" key: {}", e.message)
            } else if e.place == "parameters" {
                format!("the {} {}", e.place, e.message)
            } else {
                format!("\"{}\" {}", e.place, e.message)
            }
        })?;
        let protocol = if m.udp {
            Protocol::Udp
        } else if m.sctp {
            return Err("SCTP is not supported".to_owned());
        } else {
            Protocol::Tcp
        };
        let d = TestParams::default();
        Ok(TestParams {
            protocol,
            omit: number(m.omit.as_ref()).unwrap_or(0.0),
            time: number(m.time.as_ref()).unwrap_or(d.time),
            bytes: whole(m.num.as_ref(), "num", u64::MAX / 2)?.unwrap_or(0),
            blocks: whole(m.blockcount.as_ref(), "blockcount", u64::MAX / 2)?.unwrap_or(0),
            parallel: whole(m.parallel.as_ref(), "parallel", u64::from(u32::MAX))?
                .map_or(1, |p| u32::try_from(p).unwrap_or(u32::MAX)),
            reverse: m.reverse,
            bidirectional: m.bidirectional,
            window: whole(m.window.as_ref(), "window", u64::from(u32::MAX))?.filter(|w| *w > 0),
            len: whole(m.len.as_ref(), "len", u64::from(u32::MAX))?
                .filter(|l| *l > 0)
                .unwrap_or(match protocol {
                    Protocol::Tcp => d.len,
                    Protocol::Udp => 1460,
                }),
            bandwidth: whole(m.bandwidth.as_ref(), "bandwidth", u64::MAX / 2)?.unwrap_or(0),
            pacing_timer: whole(m.pacing_timer.as_ref(), "pacing_timer", 10_000_000)?
                .unwrap_or(d.pacing_timer),
            mss: whole(m.mss.as_ref(), "MSS", u64::from(u32::MAX))?
                .filter(|x| *x > 0)
                .and_then(|x| u32::try_from(x).ok()),
            nodelay: m.nodelay,
            tos: whole(m.tos.as_ref(), "TOS", 255)?
                .filter(|t| *t > 0)
                .and_then(|t| u8::try_from(t).ok()),
            congestion: m.congestion,
            get_server_output: m.get_server_output,
            udp_counters_64bit: m.udp_counters_64bit,
            client_version: m.client_version,
            extension: m.linerate,
        })
    }

    /// The parameters as the client sends them.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.to_wire()).unwrap_or(Value::Null)
    }

    /// The parameters in iperf3's keys.
    pub fn to_wire(&self) -> Params<Extension> {
        // iperf3 3.12 reads these with cJSON's valueint: whole numbers.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let whole_secs = |s: f64| Number::from(s.max(0.0) as u64);
        Params {
            tcp: self.protocol == Protocol::Tcp,
            udp: self.protocol == Protocol::Udp,
            sctp: false,
            omit: Some(whole_secs(self.omit.round())),
            time: Some(whole_secs(self.time.ceil())),
            num: Some(self.bytes.into()),
            blockcount: Some(self.blocks.into()),
            parallel: Some(self.parallel.into()),
            reverse: self.reverse,
            bidirectional: self.bidirectional,
            window: self.window.map(Number::from),
            len: Some(self.len.into()),
            bandwidth: (self.bandwidth > 0).then(|| self.bandwidth.into()),
            pacing_timer: Some(self.pacing_timer.into()),
            mss: self.mss.map(Number::from),
            nodelay: self.nodelay,
            tos: self.tos.map(Number::from),
            congestion: self.congestion.clone(),
            get_server_output: self.get_server_output,
            udp_counters_64bit: self.udp_counters_64bit,
            client_version: self.client_version.clone(),
            linerate: self.extension.clone(),
        }
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
