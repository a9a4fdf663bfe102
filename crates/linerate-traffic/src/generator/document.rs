//! What `linerate gen` prints with `--json`, as types: the sender's `linerate.gen/1` document
//! ([`Sent`]) and the receive counter's `linerate.gen-receive/1` ([`Received`]). The generator
//! writes them and whoever spawns it (the lab's RFC 2544 trials) reads them back with
//! [`read`], so a field renamed on one side is an error naming the field on the other, never
//! a silent zero.
//!
//! Every field the writer always prints is required when read: an `Option` the writer prints
//! as `null` must still be there (`present`); only the fields the writer leaves out when empty
//! (`engine_fallback`, `queue`) may be missing.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A schema tag: serialises as its text, and reads only that text.
macro_rules! schema_tag {
    ($(#[$doc:meta])* $name:ident, $text:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct $name;

        impl $name {
            /// The schema's text.
            pub const TEXT: &'static str = $text;
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($text)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                if text == $text {
                    Ok($name)
                } else {
                    Err(serde::de::Error::custom(format!(
                        "schema {text:?} is not {:?}",
                        $text
                    )))
                }
            }
        }
    };
}

schema_tag!(
    /// `linerate.gen/1`.
    SentSchema,
    "linerate.gen/1"
);
schema_tag!(
    /// `linerate.gen-receive/1`.
    ReceivedSchema,
    "linerate.gen-receive/1"
);

/// An optional value the writer always prints (`null` when absent): required when read.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    Option::<T>::deserialize(d)
}

/// How the frames were handed to the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineUsed {
    /// AF_PACKET `TPACKET_V2` transmit rings.
    Packet,
    /// AF_XDP sockets.
    Xdp,
}

/// The `linerate.gen/1` document: what the sender sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sent {
    /// Always `linerate.gen/1`.
    pub schema: SentSchema,
    /// The interface sent on.
    pub dev: String,
    /// Frames sent over all threads.
    pub sent_frames: u64,
    /// Their bytes, FCS included.
    pub sent_bytes: u64,
    /// The senders' own time (first frame to last hand-over of the slowest thread), seconds.
    pub seconds: f64,
    /// Frames/s over `seconds`.
    pub sent_pps: f64,
    /// L2 bits/s (FCS included) over `seconds`.
    pub sent_l2_bps: f64,
    /// The engine used.
    pub engine: EngineUsed,
    /// How the engine sends (ring kind, AF_XDP copy or zero-copy).
    pub engine_detail: String,
    /// Why `--engine auto` did not use AF_XDP (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_fallback: Option<String>,
    /// Per sending thread.
    pub threads: Vec<ThreadSent>,
}

/// What one sending thread sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadSent {
    /// The thread's number, from 0 (the top byte of its frames' sequence numbers).
    pub thread: u16,
    /// Frames sent.
    pub sent_frames: u64,
    /// Their bytes, FCS included.
    pub sent_bytes: u64,
    /// The thread's time, seconds.
    pub seconds: f64,
    /// Frames/s over its time.
    pub sent_pps: f64,
    /// Ring slots the kernel refused as malformed (packet engine).
    pub wrong_format: u64,
    /// Whether the thread was pinned to one CPU.
    pub pinned: bool,
    /// The CPU it was pinned to, or (unpinned) the one it ran on last.
    #[serde(deserialize_with = "present")]
    pub cpu: Option<usize>,
    /// The interface queue of its AF_XDP socket (xdp engine only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<u32>,
}

/// The `linerate.gen-receive/1` document: what the counter counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Received {
    /// Always `linerate.gen-receive/1`.
    pub schema: ReceivedSchema,
    /// The interface counted on.
    pub dev: String,
    /// The counter's whole time, seconds.
    pub seconds: f64,
    /// From the first to the last signed frame's arrival (kernel timestamps); the rates below
    /// are over this span when it is not zero, else over `seconds`.
    pub active_seconds: f64,
    /// Distinct signed frames.
    pub received_frames: u64,
    /// Their bytes, FCS included.
    pub received_bytes: u64,
    /// Frames/s.
    pub received_pps: f64,
    /// L2 bits/s.
    pub received_l2_bps: f64,
    /// Frames missing between the lowest and highest sequence number of each stream.
    pub lost_frames: u64,
    /// Lost over expected.
    pub loss_ratio: f64,
    /// Frames seen twice.
    pub duplicate_frames: u64,
    /// Frames that arrived after a later one.
    pub reordered_frames: u64,
    /// Sending threads × source addresses seen.
    pub streams: u64,
    /// Frames seen on the interface without linerate's signature.
    pub other_frames: u64,
    /// One-way latency percentiles in microseconds (`null` when no frame was stamped).
    #[serde(deserialize_with = "present")]
    pub latency_us: Option<Latency>,
    /// Frames whose send stamp lies after their arrival (the clocks disagree).
    pub clock_skew_frames: u64,
    /// Frames the receive ring dropped (PACKET_STATISTICS).
    pub ring_drops: u64,
    /// The interface's own counters over the same time.
    pub interface: IfCounters,
}

/// One-way latency percentiles, microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Smallest.
    pub min: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Largest.
    pub max: f64,
    /// Mean.
    pub mean: f64,
}

/// An interface's receive counters (`/sys/class/net/DEV/statistics`), or their difference.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IfCounters {
    /// Packets received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Packets the kernel dropped on receive.
    pub rx_dropped: u64,
}

/// Why a document could not be read.
#[derive(Debug, thiserror::Error)]
#[error("field `{field}`: {reason}")]
pub struct DocumentError {
    /// The path of the field that was missing or of the wrong type (`threads[0].cpu`; `.` for
    /// the document itself).
    pub field: String,
    /// What was wrong with it.
    pub reason: String,
}

/// Reads one document (`Sent` or `Received`) from JSON text; an error names the field.
pub fn read<T: serde::de::DeserializeOwned>(json: &[u8]) -> Result<T, DocumentError> {
    let mut de = serde_json::Deserializer::from_slice(json);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let field = e.path().to_string();
        let reason = e.inner().to_string();
        // serde names a missing field in its message, at the path of the object that lacks it.
        let field = match missing_field(&reason) {
            Some(name) if field == "." => name.to_owned(),
            Some(name) => format!("{field}.{name}"),
            None => field,
        };
        DocumentError { field, reason }
    })?;
    de.end().map_err(|e| DocumentError {
        field: ".".into(),
        reason: e.to_string(),
    })?;
    Ok(value)
}

/// The field a serde "missing field `x`" message names.
fn missing_field(reason: &str) -> Option<&str> {
    let rest = reason.strip_prefix("missing field `")?;
    rest.split('`').next()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent() -> Sent {
        Sent {
            schema: SentSchema,
            dev: "veth0".into(),
            sent_frames: 1000,
            sent_bytes: 64_000,
            seconds: 1.0,
            sent_pps: 1000.0,
            sent_l2_bps: 512_000.0,
            engine: EngineUsed::Packet,
            engine_detail: "AF_PACKET".into(),
            engine_fallback: None,
            threads: vec![ThreadSent {
                thread: 0,
                sent_frames: 1000,
                sent_bytes: 64_000,
                seconds: 1.0,
                sent_pps: 1000.0,
                wrong_format: 0,
                pinned: true,
                cpu: Some(0),
                queue: None,
            }],
        }
    }

    fn text() -> String {
        serde_json::to_string(&sent()).expect("serialise")
    }

    #[test]
    fn a_document_reads_back_as_written() {
        let back: Sent = read(text().as_bytes()).expect("read");
        assert_eq!(back, sent());
        assert!(text().starts_with("{\"schema\":\"linerate.gen/1\",\"dev\":\"veth0\""));
        assert!(!text().contains("engine_fallback") && !text().contains("queue"));
    }

    #[test]
    fn a_renamed_field_is_an_error_naming_it() {
        let renamed = text().replacen("\"sent_frames\":", "\"frames\":", 1);
        let err = read::<Sent>(renamed.as_bytes()).expect_err("renamed");
        assert_eq!(err.field, "sent_frames", "{err}");
        let inner = text().replace("\"cpu\":0", "\"core\":0");
        let err = read::<Sent>(inner.as_bytes()).expect_err("renamed");
        assert_eq!(err.field, "threads[0].cpu", "{err}");
    }

    #[test]
    fn a_field_of_the_wrong_type_or_schema_is_an_error_naming_it() {
        let typed = text().replacen("\"sent_frames\":1000", "\"sent_frames\":\"1000\"", 1);
        let err = read::<Sent>(typed.as_bytes()).expect_err("a string");
        assert_eq!(err.field, "sent_frames", "{err}");
        let schema = text().replace("linerate.gen/1", "linerate.gen/2");
        let err = read::<Sent>(schema.as_bytes()).expect_err("another schema");
        assert_eq!(err.field, "schema", "{err}");
        assert!(err.to_string().contains("linerate.gen/2"), "{err}");
        // A receiver's document is not a sender's.
        let err = read::<Received>(text().as_bytes()).expect_err("not a receiver's");
        assert_eq!(err.field, "schema", "{err}");
    }

    #[test]
    fn a_null_the_writer_prints_must_be_there() {
        let without = text().replace(",\"cpu\":0", "");
        let err = read::<Sent>(without.as_bytes()).expect_err("no cpu");
        assert_eq!(err.field, "threads[0].cpu", "{err}");
        let null = text().replace("\"cpu\":0", "\"cpu\":null");
        let back: Sent = read(null.as_bytes()).expect("null reads as none");
        assert_eq!(back.threads[0].cpu, None);
    }
}
