//! The frame generator as an experiment's load: `pps` workloads sent by `linerate gen` (raw
//! frames, `streams` sending threads) and counted by `linerate gen --receive` in `recv`, each
//! run written as a typed iperf3-schema document (UDP sums: frames sent, frames lost, the
//! details in its `linerate` object) so the results store keeps it like any other run; and
//! `rfc2544` workloads: the RFC 2544 procedure ([`crate::rfc2544::procedure`], the one `lab
//! rfc2544` runs) on the lab's namespaces for the workload's frame size, stored as `lab
//! rfc2544` stores its results.

use std::path::Path;

use linerate_calc::ethernet::FrameSpec;
use linerate_iperf3::{Document, EndReport, Linerate, Start, TestStart, Timestamp};
use linerate_store::rfc2544::{SearchMethod, Settings};
use linerate_units::ByteSize;

use super::{Measure, RunDocument};
use crate::LabError;
use crate::experiment::Workload;
use crate::rfc2544::bed::{Counted, TestBed};
use crate::rfc2544::namespaces::Namespaces;
use crate::rfc2544::procedure::{self, MaxLoad, Plan};
use crate::rfc2544::search;
use crate::state::{LabState, StateDir};

/// Length of an `rfc2544` run's generator-ceiling measurement, seconds.
const CEILING_TRIAL_S: f64 = 1.0;

/// The workload's frame size (64 bytes unless it says).
fn frame_of(w: &Workload) -> FrameSpec {
    FrameSpec::Size(w.frame.unwrap_or(ByteSize::from_bytes(64)))
}

fn threads(w: &Workload) -> u16 {
    u16::try_from(w.streams).unwrap_or(u16::MAX).clamp(1, 64)
}

/// The iperf3-schema document of a `pps` run: `c` over `secs` seconds, with what resolving
/// the path repaired.
fn document(
    w: &Workload,
    secs: f64,
    c: &Counted,
    restored: Option<String>,
) -> Result<Document, LabError> {
    let frame = w.frame.map_or(64, |f| f.bytes()) as f64;
    let (sent, received) = (c.sent, c.received);
    let lost = sent.saturating_sub(received);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let sum = |frames: u64| EndReport {
        start: Some(0.0),
        end: Some(secs),
        seconds: Some(secs),
        bytes: (frames as f64 * frame) as u64,
        bits_per_second: frames as f64 * frame * 8.0 / secs.max(1e-9),
        packets: Some(sent),
        lost_packets: Some(lost),
        lost_percent: Some(if sent > 0 {
            lost as f64 / sent as f64 * 100.0
        } else {
            0.0
        }),
        jitter_ms: Some(0.0),
        sender: Some(true),
        ..EndReport::default()
    };
    let mut linerate = Linerate {
        mode: Some("pps".into()),
        sent_pps: Some(sent as f64 / secs.max(1e-9)),
        received_pps: Some(received as f64 / secs.max(1e-9)),
        lost_packets: Some(lost),
        ..Linerate::default()
    };
    let encode = |v: Result<serde_json::Value, serde_json::Error>| {
        v.map_err(|e| LabError::Io {
            what: "encode the run's document".into(),
            source: std::io::Error::other(e),
        })
    };
    let extra = &mut linerate.extra;
    extra.insert("generator".into(), "linerate gen".into());
    extra.insert("ring_drops".into(), c.ring_drops.into());
    extra.insert(
        "latency_us".into(),
        encode(serde_json::to_value(c.latency))?,
    );
    // What resolving the path repaired goes with the run, where the store keeps it.
    if let Some(r) = restored {
        extra.insert("forwarding_restored".into(), r.into());
    }
    let mut doc = Document {
        start: Start {
            version: Some("linerate gen".into()),
            timestamp: Some(Timestamp {
                timesecs: Some(now),
                ..Timestamp::default()
            }),
            test_start: Some(TestStart {
                protocol: Some("UDP".into()),
                num_streams: Some(u64::from(w.streams)),
                blksize: Some(frame as u64),
                duration: Some(w.duration.as_secs_f64()),
                ..TestStart::default()
            }),
            ..Start::default()
        },
        linerate: Some(linerate),
        ..Document::default()
    };
    doc.end.sum = Some(sum(sent));
    doc.end.sum_sent = Some(sum(sent));
    doc.end.sum_received = Some(sum(received));
    Ok(doc)
}

/// A `pps` run: the generator as fast as it goes for the workload's duration; the measure is
/// the frames per second counted at `recv`.
pub fn pps(
    lab: &LabState,
    w: &Workload,
    binary: &Path,
    dir: &StateDir,
    interrupted: &dyn Fn() -> bool,
) -> Result<Measure, LabError> {
    let mut bed = Namespaces::through(dir, lab, binary.to_owned(), threads(w), interrupted)?;
    let frame = frame_of(w);
    bed.warm_up(frame)?;
    let c = bed.trial(frame, None, w.duration.as_secs_f64())?;
    let seconds = c.seconds.max(1e-9);
    let doc = document(w, seconds, &c, bed.repaired())?;
    Ok(Measure {
        value: c.received as f64 / seconds,
        unit: "packet/s",
        seconds,
        document: Some(RunDocument::Iperf3(Box::new(doc))),
    })
}

/// The procedure's plan for an `rfc2544` workload: final trials of the
/// workload's duration, its `pdr`, `width`, `phases`, `repeat` and `initial_trial` where it sets
/// them, else the defaults of `lab rfc2544` (the first phase's trials a tenth of the final ones,
/// 0.2 to 1 s), latency trials as long as the final ones unless `latency = false`.
fn plan(w: &Workload) -> Plan {
    let final_s = w.duration.as_secs_f64();
    let initial_s = w
        .initial_trial
        .map_or((final_s / 10.0).clamp(0.2, 1.0), |d| d.as_secs_f64());
    Plan {
        frames: vec![frame_of(w)],
        settings: Settings {
            trial_s: final_s,
            // `lab run --duration` may have shortened the final trials below the file's.
            initial_trial_s: initial_s.min(final_s),
            phases: w.phases.unwrap_or(search::DEFAULT_PHASES),
            width: w.width.map_or(search::DEFAULT_WIDTH, |p| p.fraction()),
            pdr_loss_ratio: w.pdr.map_or(search::DEFAULT_PDR, |p| p.fraction()),
            repeat: w.repeat.unwrap_or(search::DEFAULT_REPEATS),
            threads: threads(w),
            search: SearchMethod::Mlr,
            latency: w.latency.unwrap_or(true),
        },
        max_trials: search::DEFAULT_MAX_TRIALS,
        max_load: MaxLoad::Ceiling,
        ceiling_trial_s: CEILING_TRIAL_S,
        latency_trial_s: final_s,
        link_rate: None,
    }
}

/// An `rfc2544` run: the procedure for the workload's frame size through the DUT, by
/// [`plan`]; the measure is NDR in frames/s, the document the stored RFC 2544 result.
pub fn rfc2544(
    lab: &LabState,
    w: &Workload,
    binary: &Path,
    dir: &StateDir,
    interrupted: &dyn Fn() -> bool,
) -> Result<Measure, LabError> {
    let mut bed = Namespaces::router(dir, lab, binary.to_owned(), threads(w), interrupted)?;
    let out = procedure::run(&mut bed, &plan(w), interrupted, &mut |_| {})?;
    let Some(doc) = out.documents().into_iter().next() else {
        return Err(LabError::Stopped);
    };
    Ok(Measure {
        value: doc.result.ndr_pps,
        unit: "packet/s",
        // The runner checks a run's length against the workload's duration: the search's
        // wall time is in the document, the measure reports the final trial's length.
        seconds: w.duration.as_secs_f64(),
        document: Some(RunDocument::Rfc2544(Box::new(doc))),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::experiment::{NoHostCheck, parse};

    fn workload(keys: &str) -> Workload {
        let text = format!(
            "[experiment]\nname = \"x\"\n[lab]\ntopology = \"router\"\n[workload]\nmode = \
             \"rfc2544\"\nduration = \"4s\"\n{keys}"
        );
        match parse(&text, Path::new("exp.toml"), &NoHostCheck) {
            Ok(e) => e.variants[0].workload.clone(),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn the_workload_s_search_keys_set_the_search() {
        let w = workload(
            "pdr = \"0.1%\"\nwidth = \"2%\"\nphases = 3\nrepeat = 1\ninitial_trial = \"500ms\"\n",
        );
        let p = plan(&w);
        let s = &p.settings;
        assert_eq!(s.pdr_loss_ratio, 0.001);
        assert!((s.width - 0.02).abs() < 1e-12, "{s:?}");
        assert_eq!((s.phases, s.repeat), (3, 1));
        assert_eq!((s.initial_trial_s, s.trial_s), (0.5, 4.0));
        assert_eq!(p.max_trials, search::DEFAULT_MAX_TRIALS);
        assert_eq!(p.max_load, MaxLoad::Ceiling);
        // Latency at 10/50/90 % of NDR unless the workload says no, each as long as a final
        // trial.
        assert!(s.latency);
        assert_eq!(p.latency_trial_s, 4.0);
        assert!(!plan(&workload("latency = false\n")).settings.latency);
    }

    #[test]
    fn without_the_keys_the_search_keeps_its_defaults() {
        let s = plan(&workload("")).settings;
        assert_eq!(s.pdr_loss_ratio, search::DEFAULT_PDR);
        assert_eq!(s.width, search::DEFAULT_WIDTH);
        assert_eq!(s.phases, search::DEFAULT_PHASES);
        assert_eq!(s.repeat, search::DEFAULT_REPEATS);
        assert!(s.latency);
        // A tenth of the final trial, at least 200 ms.
        assert_eq!((s.initial_trial_s, s.trial_s), (0.4, 4.0));
    }

    #[test]
    fn a_shortened_final_trial_caps_the_first_phase_s() {
        let mut w = workload("initial_trial = \"3s\"\n");
        // What `lab run --duration 1s` does to the file's workload.
        w.duration = linerate_units::Duration::from_secs(1);
        let s = plan(&w).settings;
        assert_eq!((s.initial_trial_s, s.trial_s), (1.0, 1.0));
    }
}
