//! The results each side sends after `EXCHANGE_RESULTS`: iperf3's keys, typed in
//! `linerate-iperf3`, with linerate's [`ResultsExtension`] in the `linerate` key.

use crate::protocol::extension::ResultsExtension;

/// One side's results.
pub type PeerResults = linerate_iperf3::exchange::Results<ResultsExtension>;

/// One stream's results as exchanged.
pub type PeerStreamResult = linerate_iperf3::exchange::StreamResults;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

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
