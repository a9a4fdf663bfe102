//! RFC 2544 throughput results as they are stored and read back: one run per frame size, its
//! document a [`Rfc2544Run`] (`linerate.rfc2544/1`: the test bed, the link rate, the search's
//! settings and the frame size's [`FrameResult`]). The procedure (`linerate-lab`) writes it,
//! `lab rfc2544` and `lab run` store it through [`Rfc2544Run::record`], and `report` reads it
//! back with [`Rfc2544Run::from_record`]: one shape for every writer and reader, and a field
//! missing or of the wrong type is an error naming it.
//!
//! Documents stored before a field was added read with its default (marked below).

use serde::{Deserialize, Serialize};

use crate::record::{Direction, RunContext, RunRecord, RunSummary};

/// The schema of the documents.
pub const SCHEMA: &str = "linerate.rfc2544/1";

/// The mode of a stored RFC 2544 run.
pub const MODE: &str = "rfc2544";

/// How the throughput was searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchMethod {
    /// MLRsearch-style: both goals at once, short trials first.
    Mlr,
    /// The plain RFC 2544 binary search, one goal after the other, every trial at full length.
    Binary,
}

/// The search's settings, for the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Final trial, seconds.
    pub trial_s: f64,
    /// First phase's trial, seconds.
    pub initial_trial_s: f64,
    /// Phases.
    pub phases: u32,
    /// Width goal, relative.
    pub width: f64,
    /// PDR's loss ratio.
    pub pdr_loss_ratio: f64,
    /// Final trials per bound.
    pub repeat: u32,
    /// Generator threads.
    pub threads: u16,
    /// The search method.
    pub search: SearchMethod,
    /// Whether latency was measured at 10/50/90 % of NDR (stored before: `true`).
    #[serde(default = "yes")]
    pub latency: bool,
}

fn yes() -> bool {
    true
}

/// A rate at one frame size, in the three ways the table shows it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// Frames per second.
    pub pps: f64,
    /// Bits/s counting preamble, SFD and inter-frame gap.
    pub l1_bps: f64,
    /// Bits/s of frames (FCS included).
    pub l2_bps: f64,
    /// Share of the line rate, percent.
    pub line_rate_percent: f64,
}

/// One-way latency percentiles of a trial, microseconds.
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
    /// Largest.
    pub max: f64,
}

/// Latency at one load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyAt {
    /// The load as a share of NDR, percent.
    pub ndr_percent: f64,
    /// The load, frames/s.
    pub load_pps: f64,
    /// Frames lost in the trial.
    pub lost: u64,
    /// Percentiles (absent when no frame arrived, or the test bed cannot measure them).
    #[serde(flatten)]
    pub latency: Option<Latency>,
}

/// One search trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// Intended load, frames/s.
    pub load_pps: f64,
    /// Duration, seconds.
    pub duration_s: f64,
    /// Frames offered (sent, or the intended count when the generator fell short).
    pub sent: u64,
    /// Frames counted at the receiver.
    pub received: u64,
    /// Lost share.
    pub loss_ratio: f64,
    /// Search phase (0-based).
    pub phase: u32,
    /// Frames the generator actually sent.
    pub generator_sent: u64,
    /// The generator sent under 98 % of the load's frames: the missing ones count as lost,
    /// but the DUT did not lose them.
    pub generator_short: bool,
}

/// The result for one frame size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameResult {
    /// `64`, `imix`.
    pub frame: String,
    /// L2 bytes per frame (the mean for IMIX).
    pub frame_bytes: f64,
    /// Frames/s at line rate.
    pub line_rate_pps: f64,
    /// NDR, frames/s (0 when even the lowest load lost frames).
    pub ndr_pps: f64,
    /// PDR, frames/s.
    pub pdr_pps: f64,
    /// NDR in the three units.
    pub ndr: Rate,
    /// PDR in the three units.
    pub pdr: Rate,
    /// The lowest load that lost frames (NDR's upper bound); absent when none did.
    pub ndr_upper_pps: Option<f64>,
    /// PDR's upper bound.
    pub pdr_upper_pps: Option<f64>,
    /// One-way latency at 10/50/90 % of NDR, microseconds (empty when not measured).
    pub latency_us: Vec<LatencyAt>,
    /// The generator alone into a sink, frames/s; `None` when the test bed has no sink to
    /// measure it with.
    pub generator_ceiling_pps: Option<f64>,
    /// The result may be the generator's, not the DUT's (see `generator_bound_reason`).
    pub generator_bound: bool,
    /// Why, when generator-bound.
    pub generator_bound_reason: Option<String>,
    /// The search met its width goal.
    pub converged: bool,
    /// Trials of the search (latency and ceiling trials not counted).
    pub trial_count: usize,
    /// Sum of the search trials' durations, seconds.
    pub trial_seconds: f64,
    /// Wall time of the search, seconds.
    pub search_seconds: f64,
    /// Frames the receive ring dropped over the search (counted as loss).
    pub ring_drops: u64,
    /// Every search trial.
    pub trials: Vec<Trial>,
    /// When the DUT (not the generator) is the limit: whether its CPU held it and where that
    /// CPU went (absent: not judged, or stored before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dut_limit: Option<linerate_iperf3::dut_limit::DutLimit>,
}

/// One frame size's stored document: the result with what it was measured on and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rfc2544Run {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The test bed (the lab's name).
    pub lab: String,
    /// Link rate used for line rate, bits/s (L1).
    pub link_bps: f64,
    /// Where the link rate came from (stored before: empty).
    #[serde(default)]
    pub link_source: String,
    /// The search's settings.
    pub settings: Settings,
    /// What the test bed repaired before the search (`ip_forward` put back in the DUT after
    /// an interrupted ceiling measurement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repaired: Option<String>,
    /// How the sender's and receiver's clocks were judged for one-way latency, when the
    /// receiver is on another host (absent: both on one host's clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<String>,
    /// The frame size's result.
    pub result: FrameResult,
}

/// Why a stored run does not read as an RFC 2544 result.
#[derive(Debug, thiserror::Error)]
pub enum Rfc2544Error {
    /// The run is of another mode.
    #[error("the run's mode is {0}, not {MODE}")]
    Mode(String),
    /// A field is missing or of the wrong type.
    #[error("its {SCHEMA} document: field `{field}`: {reason}")]
    Field {
        /// The field's path (`result.ndr_pps`).
        field: String,
        /// What was wrong.
        reason: String,
    },
}

impl Rfc2544Run {
    /// The stored run of this result: mode [`MODE`], its headline NDR (L2 bit/s in the summary,
    /// frames/s in the document), its length the search's wall time, no interval samples.
    pub fn record(&self, context: RunContext, started_at: i64) -> Result<RunRecord, Rfc2544Error> {
        let r = &self.result;
        let document = serde_json::to_value(self).map_err(|e| Rfc2544Error::Field {
            field: ".".into(),
            reason: e.to_string(),
        })?;
        let params = serde_json::to_value(&self.settings).map_err(|e| Rfc2544Error::Field {
            field: "settings".into(),
            reason: e.to_string(),
        })?;
        Ok(RunRecord {
            started_at,
            source: context.source,
            source_path: context.source_path,
            command_line: context.command_line,
            tool: context.tool.unwrap_or_default(),
            mode: MODE.into(),
            direction: Direction::Send,
            peer: None,
            streams: u32::from(self.settings.threads),
            duration_s: r.search_seconds,
            params,
            summary: RunSummary {
                sent_bps: r.ndr.l2_bps,
                received_bps: r.ndr.l2_bps,
                ..RunSummary::default()
            },
            intervals: Vec::new(),
            stream_results: Vec::new(),
            latency: None,
            host: context.host,
            experiment: context.experiment,
            partial: false,
            document,
        })
    }

    /// Reads a stored run's document back; an error names the field that is missing or of
    /// the wrong type.
    pub fn from_record(run: &RunRecord) -> Result<Rfc2544Run, Rfc2544Error> {
        if run.mode != MODE {
            return Err(Rfc2544Error::Mode(run.mode.clone()));
        }
        Rfc2544Run::from_value(&run.document)
    }

    /// Reads a document; an error names the field that is missing or of the wrong type.
    pub fn from_value(document: &serde_json::Value) -> Result<Rfc2544Run, Rfc2544Error> {
        let doc: Rfc2544Run = serde_path_to_error::deserialize(document).map_err(|e| {
            let path = e.path().to_string();
            let reason = e.inner().to_string();
            let field = match reason
                .strip_prefix("missing field `")
                .and_then(|r| r.split('`').next())
            {
                Some(name) if path == "." => name.to_owned(),
                Some(name) => format!("{path}.{name}"),
                None => path,
            };
            Rfc2544Error::Field { field, reason }
        })?;
        if doc.schema != SCHEMA {
            return Err(Rfc2544Error::Field {
                field: "schema".into(),
                reason: format!("{:?} is not {SCHEMA:?}", doc.schema),
            });
        }
        Ok(doc)
    }
}

/// A rate at one frame size from its frames/s: `frame_bytes` the frame (FCS included),
/// `wire_bytes` with preamble, SFD and gap, `line_pps` frames/s at line rate.
pub fn rate(pps: f64, frame_bytes: f64, wire_bytes: f64, line_pps: f64) -> Rate {
    Rate {
        pps,
        l1_bps: pps * wire_bytes * 8.0,
        l2_bps: pps * frame_bytes * 8.0,
        line_rate_percent: pps / line_pps * 100.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RunSource;

    pub(crate) fn sample() -> Rfc2544Run {
        let line = 14_880_952.38;
        Rfc2544Run {
            schema: SCHEMA.into(),
            lab: "demo".into(),
            link_bps: 10e9,
            link_source: "veth's nominal 10 Gbit/s".into(),
            settings: Settings {
                trial_s: 2.0,
                initial_trial_s: 0.2,
                phases: 2,
                width: 0.005,
                pdr_loss_ratio: 0.005,
                repeat: 2,
                threads: 1,
                search: SearchMethod::Mlr,
                latency: true,
            },
            repaired: None,
            clock: None,
            result: FrameResult {
                frame: "64".into(),
                frame_bytes: 64.0,
                line_rate_pps: line,
                ndr_pps: 50_000.0,
                pdr_pps: 50_100.0,
                ndr: rate(50_000.0, 64.0, 84.0, line),
                pdr: rate(50_100.0, 64.0, 84.0, line),
                ndr_upper_pps: Some(50_200.0),
                pdr_upper_pps: None,
                latency_us: vec![LatencyAt {
                    ndr_percent: 10.0,
                    load_pps: 5000.0,
                    lost: 0,
                    latency: Some(Latency {
                        min: 5.0,
                        p50: 9.0,
                        p90: 12.0,
                        p99: 20.0,
                        max: 40.0,
                    }),
                }],
                generator_ceiling_pps: Some(600_000.0),
                generator_bound: false,
                generator_bound_reason: None,
                converged: true,
                trial_count: 1,
                trial_seconds: 2.0,
                search_seconds: 9.5,
                ring_drops: 0,
                trials: vec![Trial {
                    load_pps: 50_000.0,
                    duration_s: 2.0,
                    sent: 100_000,
                    received: 100_000,
                    loss_ratio: 0.0,
                    phase: 1,
                    generator_sent: 100_000,
                    generator_short: false,
                }],
                dut_limit: None,
            },
        }
    }

    #[test]
    fn a_stored_run_reads_back_as_it_was_written() {
        let doc = sample();
        let run = doc
            .record(RunContext::new(RunSource::Lab), 1_700_000_000)
            .expect("record");
        assert_eq!(run.mode, MODE);
        assert_eq!(run.duration_s, 9.5);
        assert_eq!(run.summary.received_bps, 50_000.0 * 64.0 * 8.0);
        assert!(run.intervals.is_empty());
        assert_eq!(Rfc2544Run::from_record(&run).expect("read"), doc);
        // The latency percentiles sit beside the load, as `lab rfc2544 --json` prints them.
        assert_eq!(run.document["result"]["latency_us"][0]["p50"], 9.0);
    }

    #[test]
    fn a_missing_or_mistyped_field_is_an_error_naming_it() {
        let run = sample()
            .record(RunContext::new(RunSource::Lab), 0)
            .expect("record");
        let mut doc = run.document.clone();
        doc["result"]
            .as_object_mut()
            .expect("object")
            .remove("ndr_pps");
        let err = Rfc2544Run::from_value(&doc)
            .expect_err("missing")
            .to_string();
        assert!(err.contains("result.ndr_pps"), "{err}");
        let mut doc = run.document.clone();
        doc["result"]["generator_bound"] = serde_json::json!("yes");
        let err = Rfc2544Run::from_value(&doc)
            .expect_err("a string")
            .to_string();
        assert!(err.contains("result.generator_bound"), "{err}");
        let mut other = run.clone();
        other.mode = "tcp".into();
        assert!(matches!(
            Rfc2544Run::from_record(&other),
            Err(Rfc2544Error::Mode(_))
        ));
    }

    #[test]
    fn a_document_stored_before_the_new_fields_still_reads() {
        let run = sample()
            .record(RunContext::new(RunSource::Lab), 0)
            .expect("record");
        let mut doc = run.document.clone();
        doc.as_object_mut().expect("object").remove("link_source");
        doc["settings"]
            .as_object_mut()
            .expect("object")
            .remove("latency");
        let back = Rfc2544Run::from_value(&doc).expect("old document");
        assert!(back.settings.latency);
        assert_eq!(back.link_source, "");
    }
}
