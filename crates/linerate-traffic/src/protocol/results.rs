//! The results each side sends after `EXCHANGE_RESULTS`, in iperf3's keys.

use serde_json::{Map, Value, json};

/// One stream's results as exchanged.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PeerStreamResult {
    /// Stream id (1, 3, 4, 5, …).
    pub id: i64,
    /// Bytes sent or received by this side after the omitted period.
    pub bytes: u64,
    /// TCP retransmits when this side sent; -1 when unknown.
    pub retransmits: i64,
    /// UDP jitter in seconds (receiver).
    pub jitter: f64,
    /// UDP datagrams lost (receiver).
    pub errors: i64,
    /// Lost during the omitted period.
    pub omitted_errors: i64,
    /// UDP datagrams.
    pub packets: i64,
    /// UDP datagrams during the omitted period.
    pub omitted_packets: i64,
    /// Seconds from test start.
    pub start_time: f64,
    /// Seconds from test start.
    pub end_time: f64,
    /// UDP datagrams out of order (linerate key, iperf3 ignores it).
    pub out_of_order: Option<u64>,
    /// UDP duplicates (linerate key).
    pub duplicates: Option<u64>,
}

/// One side's results.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PeerResults {
    /// Process CPU use over the test, percent of one core.
    pub cpu_util_total: f64,
    /// User part.
    pub cpu_util_user: f64,
    /// System part.
    pub cpu_util_system: f64,
    /// 1 when this side sent TCP and can count retransmits.
    pub sender_has_retransmits: i64,
    /// Congestion control used by this side's sockets.
    pub congestion_used: Option<String>,
    /// Per stream.
    pub streams: Vec<PeerStreamResult>,
    /// The server's human output, when asked.
    pub server_output_text: Option<String>,
    /// The server's JSON output, when asked.
    pub server_output_json: Option<Value>,
    /// linerate's extension object, present when the peer is linerate.
    pub linerate: Option<Value>,
}

fn int(m: &Map<String, Value>, key: &str) -> Option<i64> {
    let v = m.get(key)?;
    // iperf3 3.12 sends -1 as 18446744073709551615: keep the wrap.
    v.as_i64()
        .or_else(|| v.as_u64().map(|u| u as i64))
        .or_else(|| v.as_f64().filter(|f| f.is_finite()).map(|f| f as i64))
}

fn float(m: &Map<String, Value>, key: &str) -> Option<f64> {
    m.get(key).and_then(Value::as_f64).filter(|f| f.is_finite())
}

impl PeerResults {
    /// Reads a peer's results; `Err` names what is missing.
    pub fn from_json(v: &Value) -> Result<PeerResults, String> {
        let m = v.as_object().ok_or("the results are not a JSON object")?;
        let streams = match m.get("streams") {
            Some(Value::Array(a)) => a,
            _ => return Err("the results have no \"streams\" array".to_owned()),
        };
        let mut out = Vec::with_capacity(streams.len().min(4096));
        for s in streams {
            let s = s.as_object().ok_or("a stream result is not an object")?;
            let id = int(s, "id").ok_or("a stream result has no \"id\"")?;
            out.push(PeerStreamResult {
                id,
                bytes: int(s, "bytes").map_or(0, |b| b.max(0) as u64),
                retransmits: int(s, "retransmits").unwrap_or(-1),
                jitter: float(s, "jitter").unwrap_or(0.0),
                errors: int(s, "errors").unwrap_or(0),
                omitted_errors: int(s, "omitted_errors").unwrap_or(0),
                packets: int(s, "packets").unwrap_or(0),
                omitted_packets: int(s, "omitted_packets").unwrap_or(0),
                start_time: float(s, "start_time").unwrap_or(0.0),
                end_time: float(s, "end_time").unwrap_or(0.0),
                out_of_order: int(s, "out_of_order").map(|x| x.max(0) as u64),
                duplicates: int(s, "duplicates").map(|x| x.max(0) as u64),
            });
        }
        Ok(PeerResults {
            cpu_util_total: float(m, "cpu_util_total").unwrap_or(0.0),
            cpu_util_user: float(m, "cpu_util_user").unwrap_or(0.0),
            cpu_util_system: float(m, "cpu_util_system").unwrap_or(0.0),
            sender_has_retransmits: int(m, "sender_has_retransmits").unwrap_or(-1),
            congestion_used: m
                .get("congestion_used")
                .and_then(Value::as_str)
                .map(str::to_owned),
            streams: out,
            server_output_text: m
                .get("server_output_text")
                .and_then(Value::as_str)
                .map(str::to_owned),
            server_output_json: m.get("server_output_json").cloned(),
            linerate: m.get("linerate").cloned(),
        })
    }

    /// The results as sent, with every key iperf3 3.12 requires.
    pub fn to_json(&self) -> Value {
        let streams: Vec<Value> = self
            .streams
            .iter()
            .map(|s| {
                let mut o = json!({
                    "id": s.id,
                    "bytes": s.bytes,
                    "retransmits": s.retransmits,
                    "jitter": s.jitter,
                    "errors": s.errors,
                    "omitted_errors": s.omitted_errors,
                    "packets": s.packets,
                    "omitted_packets": s.omitted_packets,
                    "start_time": s.start_time,
                    "end_time": s.end_time,
                });
                if let Some(x) = s.out_of_order {
                    o["out_of_order"] = json!(x);
                }
                if let Some(x) = s.duplicates {
                    o["duplicates"] = json!(x);
                }
                o
            })
            .collect();
        let mut v = json!({
            "cpu_util_total": self.cpu_util_total,
            "cpu_util_user": self.cpu_util_user,
            "cpu_util_system": self.cpu_util_system,
            "sender_has_retransmits": self.sender_has_retransmits,
            "streams": streams,
        });
        if let Some(cc) = &self.congestion_used {
            v["congestion_used"] = json!(cc);
        }
        if let Some(t) = &self.server_output_text {
            v["server_output_text"] = json!(t);
        }
        if let Some(j) = &self.server_output_json {
            v["server_output_json"] = j.clone();
        }
        if let Some(l) = &self.linerate {
            v["linerate"] = l.clone();
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iperf3_312_wrapped_retransmits_read_as_minus_one() {
        let v: Value = serde_json::from_str(
            r#"{"cpu_util_total":1.5,"cpu_util_user":0.5,"cpu_util_system":1.0,
                "sender_has_retransmits":0,"streams":[{"id":1,"bytes":1000,
                "retransmits":18446744073709551615,"jitter":0,"errors":0,"packets":0,
                "start_time":0,"end_time":1.0}]}"#,
        )
        .unwrap();
        let r = PeerResults::from_json(&v).unwrap();
        assert_eq!(r.streams[0].retransmits, -1);
        assert_eq!(r.streams[0].bytes, 1000);
        assert_eq!(PeerResults::from_json(&r.to_json()).unwrap(), r);
    }

    #[test]
    fn missing_streams_is_an_error() {
        assert!(PeerResults::from_json(&json!({"cpu_util_total": 1})).is_err());
        assert!(PeerResults::from_json(&json!({"streams": [{"bytes": 1}]})).is_err());
    }
}
