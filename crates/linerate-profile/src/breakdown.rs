//! The attribution's shares (per CPU, per context, per subsystem) as one serde type: printed
//! by `linerate profile --json` (flattened into schema linerate.profile/1) and stored with
//! each profiled run of `lab run --profile` (the store keeps it as an opaque JSON document),
//! then read back by `compare` and `report`. Writer and reader go through [`Breakdown`], so a
//! renamed or mistyped field is an error that names it, never a zero or an empty list.

use std::collections::HashMap;

use crate::error::ProfileError;

/// One line of a breakdown.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Share {
    /// What the samples were counted for (`cpu0`, `softirq via veth_poll`, `nftables`).
    pub name: String,
    /// Samples counted for it.
    pub samples: u64,
    /// `samples` in percent of all samples (two decimals).
    pub percent: f64,
}

/// The three breakdowns, as shares of all samples.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Breakdown {
    /// Per CPU, in CPU order.
    pub by_cpu: Vec<Share>,
    /// Per context (network namespace, softirq with its NAPI poll function, idle), largest
    /// first.
    pub by_context: Vec<Share>,
    /// Per kernel subsystem, inclusive (they overlap), largest first; subsystems without a
    /// sample are left out.
    pub by_subsystem: Vec<Share>,
}

impl Breakdown {
    /// The JSON document the store keeps.
    pub fn to_stored(&self) -> Result<serde_json::Value, ProfileError> {
        serde_json::to_value(self).map_err(ProfileError::BreakdownJson)
    }

    /// Reads a document the store kept; a missing or mistyped field is an error naming it.
    pub fn from_stored(doc: &serde_json::Value) -> Result<Breakdown, ProfileError> {
        serde_path_to_error::deserialize(doc).map_err(|e| {
            let path = e.path().to_string();
            ProfileError::StoredBreakdown {
                path: if path == "." { String::new() } else { path },
                message: e.into_inner().to_string(),
            }
        })
    }

    /// Each subsystem's share, 0 to 1.
    pub fn subsystem_shares(&self) -> HashMap<String, f64> {
        self.by_subsystem
            .iter()
            .map(|s| (s.name.clone(), s.percent / 100.0))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(name: &str, samples: u64, percent: f64) -> Share {
        Share {
            name: name.to_owned(),
            samples,
            percent,
        }
    }

    #[test]
    fn what_is_stored_reads_back_the_same() {
        let b = Breakdown {
            by_cpu: vec![share("cpu0", 3, 75.0), share("cpu1", 1, 25.0)],
            by_context: vec![share("softirq via veth_poll", 4, 100.0)],
            by_subsystem: vec![share("nftables", 1, 25.0)],
        };
        let doc = b.to_stored().expect("to JSON");
        assert_eq!(Breakdown::from_stored(&doc).expect("reads"), b);
        assert_eq!(b.subsystem_shares()["nftables"], 0.25);
    }

    #[test]
    fn a_row_written_before_the_type_still_reads() {
        // What `lab run --profile` stored before the breakdown had a type: the shape is the
        // same (whole percentages are integers in the JSON text).
        let text = r#"{"by_cpu":[{"name":"cpu0","samples":8,"percent":100}],
            "by_context":[{"name":"netns lr-p-gen","samples":8,"percent":100.0}],
            "by_subsystem":[{"name":"nftables","samples":1,"percent":12.5},
                            {"name":"AF_PACKET","samples":2,"percent":25.0}]}"#;
        let doc: serde_json::Value = serde_json::from_str(text).expect("JSON");
        let b = Breakdown::from_stored(&doc).expect("an old row reads");
        assert_eq!(b.by_cpu, vec![share("cpu0", 8, 100.0)]);
        assert_eq!(b.subsystem_shares()["nftables"], 0.125);
        assert_eq!(b.subsystem_shares()["AF_PACKET"], 0.25);
    }

    #[test]
    fn a_missing_or_mistyped_field_is_named_not_zero() {
        let missing = serde_json::json!({"by_cpu": [], "by_context": []});
        let e = Breakdown::from_stored(&missing).expect_err("no by_subsystem");
        assert_eq!(
            e.to_string(),
            "the stored breakdown: missing field `by_subsystem`"
        );
        let no_percent = serde_json::json!({"by_cpu": [], "by_context": [],
            "by_subsystem": [{"name": "nftables", "samples": 5}]});
        let e = Breakdown::from_stored(&no_percent).expect_err("no percent");
        assert_eq!(
            e.to_string(),
            "the stored breakdown: by_subsystem[0]: missing field `percent`"
        );
        let text = serde_json::json!({"by_cpu": [], "by_context": [],
            "by_subsystem": [{"name": "nftables", "samples": 5, "percent": "12.5"}]});
        let e = Breakdown::from_stored(&text).expect_err("a string percent");
        assert!(
            e.to_string()
                .starts_with("the stored breakdown: by_subsystem[0].percent: invalid type"),
            "{e}"
        );
        let e = Breakdown::from_stored(&serde_json::json!("cpu0 100%")).expect_err("not an object");
        assert!(e.to_string().contains("invalid type: string"), "{e}");
    }
}
