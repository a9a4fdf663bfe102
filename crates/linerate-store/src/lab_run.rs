//! What `lab run` stores with each run, beside the load's own document (as the document's
//! `linerate.lab` object): the test bed the run was measured on (topology, link emulation,
//! tunnel) and the value the lab compared. `lab run` writes it and the report reads it through
//! this one type, so a renamed or missing field is an error, not a silent blank.

use crate::record::RunRecord;
use serde::{Deserialize, Serialize};

/// The key of the object in the document's `linerate` object.
pub const KEY: &str = "lab";

/// One lab run's test bed and measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabRun {
    /// The lab's name.
    pub lab: String,
    /// `pair` or `router`.
    pub topology: String,
    /// How the links were emulated: `kernel netem`, `userspace (linerate lab emulate)`,
    /// `none`.
    pub emulator: String,
    /// Each link's emulated settings (`l0: rate 200 Mbit/s, delay 2 ms`); empty when none were
    /// set.
    pub links: Vec<String>,
    /// The tunnel and the implementation that ran (`wireguard: kernel`), when the lab had one.
    pub tunnel: Option<String>,
    /// The workload's mode: `tcp`, `udp`, `pps`, `rr`, `rfc2544`.
    pub workload: String,
    /// The value the lab compared for this run (its measure).
    pub value: f64,
    /// Its unit: `bit/s`, `packet/s`, `transaction/s`.
    pub unit: String,
    /// On real hosts (an experiment's `[hosts]`), each host's facts: `gen root@a: Linux
    /// 6.12; CPU …; eth0: ixgbe, 10 Gbit/s`; empty for a lab.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
}

/// A run's `linerate.lab` object that does not read as a [`LabRun`].
#[derive(Debug, thiserror::Error)]
#[error("linerate.{KEY}: {0}")]
pub struct LabRunError(#[from] serde_json::Error);

impl LabRun {
    /// The lab facts of `run`: `None` for a run `lab run` did not measure (or one stored before
    /// lab runs carried them).
    ///
    /// # Errors
    /// The object is there but not a [`LabRun`] (a field missing, renamed or of another type).
    pub fn of(run: &RunRecord) -> Result<Option<LabRun>, LabRunError> {
        match run.document.get("linerate").and_then(|l| l.get(KEY)) {
            Some(v) => Ok(Some(LabRun::deserialize(v)?)),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(lab: serde_json::Value) -> RunRecord {
        let mut run: RunRecord = serde_json::from_value(serde_json::json!({
            "started_at": 0, "source": "lab", "tool": "linerate", "mode": "tcp",
            "direction": "send", "streams": 1, "duration_s": 1.0, "params": {},
            "summary": {"bytes_sent": 0, "bytes_received": 0, "sent_bps": 0.0,
                        "received_bps": 0.0},
            "intervals": [], "stream_results": [], "document": {}
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        run.document = serde_json::json!({"linerate": {"lab": lab}});
        run
    }

    #[test]
    fn a_field_missing_or_renamed_is_an_error_that_names_it() {
        let good = serde_json::json!({
            "lab": "x", "topology": "pair", "emulator": "kernel netem", "links": [],
            "tunnel": null, "workload": "tcp", "value": 1.5, "unit": "bit/s"
        });
        let read = LabRun::of(&with(good.clone())).ok().flatten();
        assert_eq!(read.map(|l| l.value), Some(1.5));
        let mut missing = good.clone();
        missing.as_object_mut().map(|o| o.remove("unit"));
        let e = LabRun::of(&with(missing)).err().map(|e| e.to_string());
        assert!(
            e.as_deref()
                .is_some_and(|e| e.contains("missing field `unit`")),
            "{e:?}"
        );
        let mut renamed = good;
        if let Some(o) = renamed.as_object_mut() {
            o.remove("value");
            o.insert("measure".into(), 1.5.into());
        }
        assert!(LabRun::of(&with(renamed)).is_err());
        let mut none = with(serde_json::json!(null));
        none.document = serde_json::json!({"linerate": {}});
        assert!(matches!(LabRun::of(&none), Ok(None)));
    }
}
