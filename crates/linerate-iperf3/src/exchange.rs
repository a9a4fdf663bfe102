//! The two JSON messages of iperf3's control channel: the parameters the client sends after
//! `PARAM_EXCHANGE` and the results each side sends after `EXCHANGE_RESULTS`. `X` is what
//! travels in the `linerate` key (iperf3 ignores keys it does not know).
//!
//! iperf3 reads a boolean parameter as set when its key is present at all, so flags are
//! written only when set; 3.12 reads numbers with cJSON's `valueint`, so the sender writes
//! whole numbers.

use serde::de::{DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

use crate::{Document, Error, de};

/// The test parameters, in iperf3's keys. Numbers are kept as written; the receiver checks
/// their ranges.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "X: DeserializeOwned", serialize = "X: Serialize"))]
pub struct Params<X> {
    /// TCP streams.
    #[serde(
        default,
        deserialize_with = "de::flag",
        skip_serializing_if = "de::is_false"
    )]
    pub tcp: bool,
    /// UDP streams.
    #[serde(
        default,
        deserialize_with = "de::flag",
        skip_serializing_if = "de::is_false"
    )]
    pub udp: bool,
    /// SCTP streams.
    #[serde(
        default,
        deserialize_with = "de::flag",
        skip_serializing_if = "de::is_false"
    )]
    pub sctp: bool,
    /// Seconds left out of the results at the start.
    #[serde(
        default,
        deserialize_with = "de::param_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub omit: Option<Number>,
    /// Test length, seconds.
    #[serde(
        default,
        deserialize_with = "de::param_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub time: Option<Number>,
    /// Bytes to send (0: not byte-bounded).
    #[serde(
        default,
        deserialize_with = "de::param_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub num: Option<Number>,
    /// Blocks to send (0: not block-bounded).
    #[serde(
        default,
        deserialize_with = "de::param_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub blockcount: Option<Number>,
    /// Streams per direction.
    #[serde(
        default,
        deserialize_with = "de::param_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub parallel: Option<Number>,
    /// The server sends.
    #[serde(
        default,
        deserialize_with = "de::flag",
        skip_serializing_if = "de::is_false"
    )]
    pub reverse: bool,
    /// Both send.
    #[serde(
        default,
        deserialize_with = "de::flag",
        skip_serializing_if = "de::is_false"
    )]
    pub bidirectional: bool,
    /// Socket buffer size, bytes.
    #[serde(
        default,
        deserialize_with = "de::param_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub window: Option<Number>,
    /// Bytes per write (TCP) or datagram payload (UDP).
    #[serde(
        default,
        deserialize_with = "de::param_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub len: Option<Number>,
    /// Target rate per stream, bit/s.
    #[serde(
        default,
        deserialize_with = "de::param_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub bandwidth: Option<Number>,
    /// Pacing timer, µs.
    #[serde(
        default,
        deserialize_with = "de::param_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub pacing_timer: Option<Number>,
    /// TCP maximum segment size.
    #[serde(
        rename = "MSS",
        default,
        deserialize_with = "de::param_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub mss: Option<Number>,
    /// TCP_NODELAY on the data streams.
    #[serde(
        default,
        deserialize_with = "de::flag",
        skip_serializing_if = "de::is_false"
    )]
    pub nodelay: bool,
    /// IP TOS byte.
    #[serde(
        rename = "TOS",
        default,
        deserialize_with = "de::param_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub tos: Option<Number>,
    /// TCP congestion control algorithm.
    #[serde(
        default,
        deserialize_with = "de::lenient_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub congestion: Option<String>,
    /// The client wants the server's output in the results (written as `1`).
    #[serde(
        default,
        deserialize_with = "de::flag",
        serialize_with = "de::flag_as_one",
        skip_serializing_if = "de::is_false"
    )]
    pub get_server_output: bool,
    /// UDP sequence numbers are 64-bit (written as `1`).
    #[serde(
        default,
        deserialize_with = "de::flag",
        serialize_with = "de::flag_as_one",
        skip_serializing_if = "de::is_false"
    )]
    pub udp_counters_64bit: bool,
    /// The client's version string.
    #[serde(
        default,
        deserialize_with = "de::lenient_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub client_version: Option<String>,
    /// linerate's extension key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linerate: Option<X>,
}

impl<X: DeserializeOwned> Params<X> {
    /// Reads the parameters; an error names the key.
    pub fn from_value(v: &Value) -> Result<Params<X>, Error> {
        if !v.is_object() {
            return Err(Error::new("parameters", "are not a JSON object"));
        }
        crate::error::from_value(v, "parameters")
    }
}

/// One side's results, in iperf3's keys. Read leniently, as iperf3 does: a missing number is
/// 0 (or -1 where iperf3 means "unknown"); only `streams` and each stream's `id` must be there.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "X: DeserializeOwned", serialize = "X: Serialize"))]
pub struct Results<X> {
    /// Process CPU use over the test, percent of one core.
    #[serde(default, deserialize_with = "zero_if_not_number")]
    pub cpu_util_total: f64,
    /// User part.
    #[serde(default, deserialize_with = "zero_if_not_number")]
    pub cpu_util_user: f64,
    /// System part.
    #[serde(default, deserialize_with = "zero_if_not_number")]
    pub cpu_util_system: f64,
    /// 1 when this side sent TCP and can count retransmits; -1 when unknown.
    #[serde(default = "minus_one", deserialize_with = "int_or_minus_one")]
    pub sender_has_retransmits: i64,
    /// Congestion control used by this side's sockets.
    #[serde(
        default,
        deserialize_with = "de::lenient_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub congestion_used: Option<String>,
    /// Per stream.
    pub streams: Vec<StreamResults>,
    /// The server's human output, when asked.
    #[serde(
        default,
        deserialize_with = "de::lenient_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub server_output_text: Option<String>,
    /// The server's own document, when asked (and it writes JSON).
    #[serde(
        default,
        deserialize_with = "de::lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub server_output_json: Option<Box<Document>>,
    /// linerate's extension object, present when the peer is linerate; one that does not read
    /// is left out (the iperf3 part still counts).
    #[serde(
        default,
        deserialize_with = "de::lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub linerate: Option<X>,
}

/// One stream's results as exchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamResults {
    /// Stream id (1, 3, 4, 5, …).
    #[serde(deserialize_with = "required_int")]
    pub id: i64,
    /// Bytes sent or received by this side after the omitted period.
    #[serde(default, deserialize_with = "count_or_zero")]
    pub bytes: u64,
    /// TCP retransmits when this side sent; -1 when unknown.
    #[serde(default = "minus_one", deserialize_with = "int_or_minus_one")]
    pub retransmits: i64,
    /// UDP jitter, seconds (receiver).
    #[serde(default, deserialize_with = "zero_if_not_number")]
    pub jitter: f64,
    /// UDP datagrams lost (receiver).
    #[serde(default, deserialize_with = "int_or_zero")]
    pub errors: i64,
    /// Lost during the omitted period.
    #[serde(default, deserialize_with = "int_or_zero")]
    pub omitted_errors: i64,
    /// UDP datagrams.
    #[serde(default, deserialize_with = "int_or_zero")]
    pub packets: i64,
    /// UDP datagrams during the omitted period.
    #[serde(default, deserialize_with = "int_or_zero")]
    pub omitted_packets: i64,
    /// Seconds from test start.
    #[serde(default, deserialize_with = "zero_if_not_number")]
    pub start_time: f64,
    /// Seconds from test start.
    #[serde(default, deserialize_with = "zero_if_not_number")]
    pub end_time: f64,
    /// UDP datagrams out of order (a linerate key; iperf3 ignores it).
    #[serde(
        default,
        deserialize_with = "opt_count_clamped",
        skip_serializing_if = "Option::is_none"
    )]
    pub out_of_order: Option<u64>,
    /// UDP datagrams received twice (a linerate key).
    #[serde(
        default,
        deserialize_with = "opt_count_clamped",
        skip_serializing_if = "Option::is_none"
    )]
    pub duplicates: Option<u64>,
}

impl Default for StreamResults {
    fn default() -> Self {
        StreamResults {
            id: 0,
            bytes: 0,
            retransmits: -1,
            jitter: 0.0,
            errors: 0,
            omitted_errors: 0,
            packets: 0,
            omitted_packets: 0,
            start_time: 0.0,
            end_time: 0.0,
            out_of_order: None,
            duplicates: None,
        }
    }
}

impl<X: DeserializeOwned + Serialize> Results<X> {
    /// Reads a peer's results; an error names what is missing or wrong.
    pub fn from_json(v: &Value) -> Result<Results<X>, Error> {
        if !v.is_object() {
            return Err(Error::new("results", "are not a JSON object"));
        }
        crate::error::from_value(v, "results")
    }

    /// The results as sent, with every key iperf3 3.12 requires.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

fn minus_one() -> i64 {
    -1
}

fn zero_if_not_number<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(de::lenient_number(d)?.unwrap_or(0.0))
}

fn int_or_minus_one<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    Ok(de::opt_wrapping_int(d)?.unwrap_or(-1))
}

fn int_or_zero<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    Ok(de::opt_wrapping_int(d)?.unwrap_or(0))
}

fn count_or_zero<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    Ok(de::opt_wrapping_int(d)?.map_or(0, |b| b.max(0).unsigned_abs()))
}

fn opt_count_clamped<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(de::opt_wrapping_int(d)?.map(|x| x.max(0).unsigned_abs()))
}

fn required_int<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    de::opt_wrapping_int(d)?
        .ok_or_else(|| serde::de::Error::custom("expected an integer stream id"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    type P = Params<Value>;

    #[test]
    fn flags_are_set_by_presence_and_written_only_when_set() {
        let p = P::from_value(&json!({"tcp": true, "reverse": 1, "nodelay": "yes",
            "bidirectional": 0, "get_server_output": 1}))
        .unwrap_or_default();
        assert!(p.tcp && p.reverse && p.nodelay && p.get_server_output);
        assert!(!p.bidirectional && !p.udp);
        let back = serde_json::to_value(&p).unwrap_or_default();
        assert_eq!(back["get_server_output"], 1);
        assert_eq!(back["reverse"], true);
        assert!(back.get("bidirectional").is_none());
    }

    #[test]
    fn a_bad_number_names_its_key() {
        let e = P::from_value(&json!({"parallel": "many"})).err();
        assert_eq!(
            e.map(|e| e.to_string()),
            Some("parallel: must be a number, got \"many\"".to_owned())
        );
        let e = P::from_value(&json!({"time": -3})).err();
        assert_eq!(
            e.map(|e| e.to_string()),
            Some("time: must be a non-negative number, got -3".to_owned())
        );
    }

    #[test]
    fn results_without_streams_or_ids_are_refused() {
        let r = Results::<Value>::from_json(&json!({"cpu_util_total": 1}));
        assert_eq!(r.err().map(|e| e.place), Some("streams".to_owned()));
        let r = Results::<Value>::from_json(&json!({"streams": [{"bytes": 1}]}));
        assert_eq!(r.err().map(|e| e.place), Some("streams[0].id".to_owned()));
    }
}
