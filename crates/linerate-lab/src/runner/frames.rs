//! The frame generator as an experiment's load: `pps` workloads sent by `linerate gen` (raw
//! frames, `streams` sending threads) and counted by `linerate gen --receive` in `recv`, and
//! `rfc2544` workloads (NDR through the DUT by the search in [`crate::rfc2544`]). Each run's
//! result is written as an iperf3-schema document (UDP sums: frames sent, frames lost) with the
//! details in its `linerate` object, so the results store keeps it like any other run.

use std::path::Path;

use linerate_iperf3::Document;
use serde_json::json;

use super::Measure;
use crate::LabError;
use crate::experiment::Workload;
use crate::rfc2544::forwarding::Restored;
use crate::rfc2544::search::{self, Config, Measurer};
use crate::rfc2544::trial::{self, Counter, LabPath};
use crate::state::{LabState, StateDir};

fn frame_of(w: &Workload) -> String {
    w.frame.map_or(64, |f| f.bytes()).to_string()
}

fn threads(w: &Workload) -> u16 {
    u16::try_from(w.streams).unwrap_or(u16::MAX).clamp(1, 64)
}

/// An iperf3-schema document of `sent` frames of which `received` arrived over `secs`.
fn document(
    mode: &str,
    restored: Option<&Restored>,
    w: &Workload,
    secs: f64,
    sent: u64,
    received: u64,
    extra: serde_json::Value,
) -> Option<Document> {
    let frame = w.frame.map_or(64, |f| f.bytes()) as f64;
    let lost = sent.saturating_sub(received);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let sum = |frames: u64| {
        json!({
            "start": 0.0,
            "end": secs,
            "seconds": secs,
            "bytes": (frames as f64 * frame) as u64,
            "bits_per_second": frames as f64 * frame * 8.0 / secs.max(1e-9),
            "packets": sent,
            "lost_packets": lost,
            "lost_percent": if sent > 0 { lost as f64 / sent as f64 * 100.0 } else { 0.0 },
            "jitter_ms": 0.0,
            "sender": true,
        })
    };
    let mut linerate = json!({
        "mode": mode,
        "generator": "linerate gen",
        "sent_pps": sent as f64 / secs.max(1e-9),
        "received_pps": received as f64 / secs.max(1e-9),
        "lost_packets": lost,
    });
    if let (Some(obj), serde_json::Value::Object(more)) = (linerate.as_object_mut(), extra) {
        obj.extend(more);
    }
    // What resolving the path repaired goes with the run, where the store keeps it.
    if let (Some(obj), Some(r)) = (linerate.as_object_mut(), restored) {
        obj.insert("forwarding_restored".into(), json!(r.to_string()));
    }
    let doc = json!({
        "start": {
            "version": "linerate gen",
            "timestamp": { "timesecs": now },
            "test_start": {
                "protocol": "UDP",
                "num_streams": w.streams,
                "blksize": frame as u64,
                "duration": w.duration.as_secs_f64(),
            },
        },
        "intervals": [],
        "end": { "sum": sum(sent), "sum_sent": sum(sent), "sum_received": sum(received) },
        "linerate": linerate,
    });
    serde_json::from_value(doc).ok()
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
    let path = LabPath::through(dir, lab, binary.to_owned(), threads(w))?;
    let frame = frame_of(w);
    trial::warm_up(&path, &frame, interrupted)?;
    let secs = w.duration.as_secs_f64();
    let c = trial::run(&path, &frame, None, secs, Counter::Recv, interrupted)?;
    let seconds = c.seconds.max(1e-9);
    let extra = json!({
        "ring_drops": c.ring_drops,
        "latency_us": c.latency,
    });
    Ok(Measure {
        value: c.received as f64 / seconds,
        unit: "packet/s",
        seconds,
        document: document(
            "pps",
            path.restored.as_ref(),
            w,
            seconds,
            c.sent,
            c.received,
            extra,
        ),
    })
}

struct Trials<'a> {
    path: &'a LabPath,
    frame: String,
    interrupted: &'a dyn Fn() -> bool,
}

impl Measurer for Trials<'_> {
    type Error = LabError;
    fn measure(&mut self, load: f64, duration: f64) -> Result<(u64, u64), LabError> {
        let (c, offered, _) =
            trial::offered(self.path, &self.frame, load, duration, self.interrupted)?;
        Ok((offered, c.received))
    }
}

/// The search of an `rfc2544` workload up to `max_load` frames/s: final trials of the
/// workload's duration, its `pdr`, `width`, `phases`, `repeat` and `initial_trial` where it sets
/// them, else the defaults of `lab rfc2544` (the first phase's trials a tenth of the final ones,
/// 0.2 to 1 s).
fn search_config(w: &Workload, max_load: f64) -> Config {
    let final_s = w.duration.as_secs_f64();
    let initial_s = w
        .initial_trial
        .map_or((final_s / 10.0).clamp(0.2, 1.0), |d| d.as_secs_f64());
    Config {
        goals: search::ndr_and_pdr(w.pdr.map_or(search::DEFAULT_PDR, |p| p.fraction())),
        min_load: search::min_load_for(max_load),
        max_load,
        // `lab run --duration` may have shortened the final trials below the file's.
        initial_duration: initial_s.min(final_s),
        final_duration: final_s,
        phases: w.phases.unwrap_or(search::DEFAULT_PHASES),
        width: w.width.map_or(search::DEFAULT_WIDTH, |p| p.fraction()),
        final_repeats: w.repeat.unwrap_or(search::DEFAULT_REPEATS),
        max_trials: search::DEFAULT_MAX_TRIALS,
    }
}

/// An `rfc2544` run: NDR (and PDR, 0.5 % unless the workload says) of the workload's frame
/// size through the DUT, by [`search_config`]; the measure is NDR in frames/s.
pub fn rfc2544(
    lab: &LabState,
    w: &Workload,
    binary: &Path,
    dir: &StateDir,
    interrupted: &dyn Fn() -> bool,
) -> Result<Measure, LabError> {
    let path = LabPath::of(dir, lab, binary.to_owned(), threads(w))?;
    let frame = frame_of(w);
    trial::warm_up(&path, &frame, interrupted)?;
    let started = std::time::Instant::now();
    let ceiling = trial::generator_ceiling(&path, &frame, 1.0, interrupted)?;
    let ceiling_pps = ceiling.received as f64 / ceiling.seconds.max(1e-9);
    let bytes = w.frame.map_or(64, |f| f.bytes()) as f64;
    let link = lab
        .links
        .iter()
        .find(|l| l.id == "l0")
        .and_then(|l| l.fwd.as_ref())
        .and_then(|i| i.rate)
        .map_or(10e9, |r| r.as_f64());
    let line_pps = linerate_calc::ethernet::frames_per_second(
        linerate_units::BitRate::from_bps_f64(link),
        bytes,
    )
    .pps();
    let max_load = line_pps.min(ceiling_pps).max(100.0);
    let final_s = w.duration.as_secs_f64();
    let cfg = search_config(w, max_load);
    let mut m = Trials {
        path: &path,
        frame,
        interrupted,
    };
    let out = search::search(&cfg, &mut m, &mut |_| {})?;
    let ndr = out.goals[0].lower.unwrap_or(0.0);
    let pdr = out.goals[1].lower.unwrap_or(0.0).max(ndr);
    let extra = json!({
        "rfc2544": {
            "search_seconds": started.elapsed().as_secs_f64(),
            "ndr_pps": ndr,
            "pdr_pps": pdr,
            "line_rate_pps": line_pps,
            "generator_ceiling_pps": ceiling_pps,
            "generator_bound": ndr >= ceiling_pps * 0.9,
            "trial_count": out.trials.len(),
            "trial_seconds": out.trial_seconds(),
            "converged": out.converged,
            "trials": out.trials,
        }
    });
    // The runner checks a run's length against the workload's duration: the search's wall
    // time is in the document, the measure reports the final trial's length.
    let sent = (ndr * final_s).round() as u64;
    Ok(Measure {
        value: ndr,
        unit: "packet/s",
        seconds: final_s,
        document: document(
            "rfc2544",
            path.restored.as_ref(),
            w,
            final_s,
            sent,
            sent,
            extra,
        ),
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
        let cfg = search_config(&w, 1e6);
        assert_eq!(cfg.goals, search::ndr_and_pdr(0.001));
        assert!((cfg.width - 0.02).abs() < 1e-12, "{cfg:?}");
        assert_eq!((cfg.phases, cfg.final_repeats), (3, 1));
        assert_eq!((cfg.initial_duration, cfg.final_duration), (0.5, 4.0));
        assert_eq!(cfg.max_load, 1e6);
        assert_eq!(cfg.max_trials, search::DEFAULT_MAX_TRIALS);
    }

    #[test]
    fn without_the_keys_the_search_keeps_its_defaults() {
        let cfg = search_config(&workload(""), 1e6);
        assert_eq!(cfg.goals, search::ndr_and_pdr(search::DEFAULT_PDR));
        assert_eq!(cfg.width, search::DEFAULT_WIDTH);
        assert_eq!(cfg.phases, search::DEFAULT_PHASES);
        assert_eq!(cfg.final_repeats, search::DEFAULT_REPEATS);
        // A tenth of the final trial, at least 200 ms.
        assert_eq!((cfg.initial_duration, cfg.final_duration), (0.4, 4.0));
    }

    #[test]
    fn a_shortened_final_trial_caps_the_first_phase_s() {
        let mut w = workload("initial_trial = \"3s\"\n");
        // What `lab run --duration 1s` does to the file's workload.
        w.duration = linerate_units::Duration::from_secs(1);
        let cfg = search_config(&w, 1e6);
        assert_eq!((cfg.initial_duration, cfg.final_duration), (1.0, 1.0));
    }
}
