//! The cost lines of the text summary: each side's CPU seconds per GB (TCP) or per million
//! datagrams (UDP), user and system apart, as `linerate.cost` holds them in `--json`.

use std::fmt::Write as _;

use linerate_iperf3::cost::{CpuSource, SideCost, TestCost};

/// `text` with the cost line put before its closing "linerate Done." (or at its end).
pub fn with_cost(text: String, cost: Option<&TestCost>) -> String {
    let Some(c) = cost else {
        return text;
    };
    let line = line(c);
    match text.rfind("\nlinerate Done.") {
        Some(at) => format!("{}{line}{}", &text[..at], &text[at..]),
        None => text + &line,
    }
}

fn line(c: &TestCost) -> String {
    let side = |s: Option<&SideCost>| match s {
        None => "unknown".to_owned(),
        Some(s) => format!(
            "{:.3} s ({:.3} u/{:.3} s){}",
            s.total_seconds,
            s.user_seconds,
            s.system_seconds,
            match s.source {
                CpuSource::Evidence => "",
                CpuSource::Iperf3 => " whole test",
            }
        ),
    };
    let mut t = String::new();
    let _ = writeln!(
        t,
        "CPU per {}: local {}, remote {}",
        c.unit.label(),
        side(c.local.as_ref()),
        side(c.remote.as_ref())
    );
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use linerate_iperf3::cost::CostUnit;

    #[test]
    fn the_cost_line_goes_before_done() {
        let c = TestCost {
            unit: CostUnit::Gb,
            moved: 20.0,
            seconds: 10.0,
            local: Some(SideCost {
                source: CpuSource::Evidence,
                user_seconds: 0.25,
                system_seconds: 0.5,
                total_seconds: 0.75,
            }),
            remote: None,
        };
        let t = with_cost("CPU Utilization: x\n\nlinerate Done.\n".into(), Some(&c));
        assert_eq!(
            t,
            "CPU Utilization: x\nCPU per GB: local 0.750 s (0.250 u/0.500 s), remote unknown\n\nlinerate Done.\n"
        );
        assert_eq!(with_cost("x\n".into(), None), "x\n");
    }
}
