//! Human and JSON renderings of lab results; a sweep over several variants as a grid is in
//! [`grid`].

mod grid;

use linerate_lab::emulator::EmulatorStats;
use linerate_lab::sysctl::SysctlWrite;
use linerate_lab::{DownReport, LabError, LabName, LabState, UpReport};
use linerate_units::human::{Digits, number};
use serde_json::{Value, json};

type Stats = [(String, bool, Option<EmulatorStats>)];

/// `lab up --json`.
pub fn up_json(r: &UpReport) -> Value {
    let mut v = serde_json::to_value(&r.state).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert(
            "sysctl_writes".into(),
            serde_json::to_value(&r.sysctls).unwrap_or(Value::Null),
        );
    }
    v
}

/// `lab show` as text.
pub fn show_text(s: &LabState, stats: &Stats) -> String {
    let mut out = format!(
        "lab {} ({}, {:?}): emulator {}",
        s.name, s.topology, s.status, s.emulator
    );
    if let Some(ms) = s.bringup_ms {
        out.push_str(&format!(", built in {ms:.1} ms"));
    }
    out.push('\n');
    for n in &s.nodes {
        for i in &n.interfaces {
            out.push_str(&format!(
                "  {:<5} {:<16} {:<13} {:<18} {}\n",
                n.name, n.netns, i.name, i.address, i.mac
            ));
        }
    }
    for f in &s.firewalls {
        out.push_str(&format!("  firewall on {}: {}\n", f.node, f.variant));
    }
    if let Some(t) = &s.tunnel {
        out.push_str(&super::tunnel::show_text(t));
    }
    for l in &s.links {
        out.push_str(&format!(
            "  {} {} -- {}  mtu {}  offloads {}",
            l.id,
            l.a,
            l.b,
            l.mtu,
            if l.offloads { "on" } else { "off" }
        ));
        match (&l.fwd, &l.rev) {
            (Some(f), Some(r)) => {
                out.push_str(&format!(
                    "\n     fwd: {}\n     rev: {}",
                    f.describe(),
                    r.describe()
                ));
                if let Some(line) = rate_layer_line(f, r, s.emulator) {
                    out.push_str(&line);
                }
                if let Some(ns) = &l.emulator_netns {
                    out.push_str(&format!(
                        "\n     emulator: namespace {ns}, pid {}",
                        l.emulator_pid.map_or("-".to_owned(), |p| p.to_string())
                    ));
                }
            }
            _ => out.push_str("  (not emulated)"),
        }
        out.push('\n');
        if let Some((_, alive, st)) = stats.iter().find(|(id, _, _)| *id == l.id) {
            if !alive {
                out.push_str("     emulator process is NOT running (link carries nothing); `lab down` then `lab up` again\n");
            }
            if let Some(st) = st {
                for (dir, d) in [("fwd", &st.fwd), ("rev", &st.rev)] {
                    out.push_str(&format!(
                        "     {dir} counters: rx {} tx {} lost {} overflow {} errors {} kernel drops {} max held {}\n",
                        d.rx_frames, d.tx_frames, d.lost, d.overflow, d.errors, d.kernel_drops, d.max_held
                    ));
                }
            }
        }
    }
    out
}

/// What a link's rate counts, for `lab show`: the layer in words and, on the kernel path,
/// the packet overhead netem was given. `None` when neither direction has a rate.
fn rate_layer_line(
    fwd: &linerate_lab::impair::Impairment,
    rev: &linerate_lab::impair::Impairment,
    emulator: linerate_lab::state::EmulatorKind,
) -> Option<String> {
    let layer = [fwd, rev]
        .iter()
        .find(|d| d.rate.is_some())
        .map(|d| d.rate_layer)?;
    let mut line = format!("\n     rate counted at {}", layer.explain());
    if emulator == linerate_lab::state::EmulatorKind::Kernel {
        line.push_str(&format!(
            "; netem paces with packet overhead {} B (`rate RATE {0}`), short frames unpadded",
            layer.netem_packet_overhead()
        ));
    }
    Some(line)
}

/// `lab show --json`.
pub fn show_json(s: &LabState, stats: &Stats) -> Value {
    let mut v = serde_json::to_value(s).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        let emus: Vec<Value> = stats
            .iter()
            .map(|(id, alive, st)| json!({ "link": id, "running": alive, "counters": st }))
            .collect();
        m.insert("emulators".into(), Value::Array(emus));
    }
    v
}

/// `lab list` as text: one lab per line, name first.
pub fn list_text(labs: &[Result<LabState, LabError>]) -> String {
    if labs.is_empty() {
        return "no labs (`linerate lab up NAME` builds one; `lab run` builds its own and removes it)\n"
            .to_owned();
    }
    let mut out = String::new();
    for l in labs {
        match l {
            Ok(s) => out.push_str(&format!(
                "{}\t{}\t{}\temulator={}\tnodes={}\n",
                s.name,
                s.topology,
                match s.status {
                    linerate_lab::state::Status::Up => "up",
                    linerate_lab::state::Status::Creating => "incomplete",
                },
                match s.emulator {
                    linerate_lab::EmulatorKind::None => "none",
                    linerate_lab::EmulatorKind::Kernel => "kernel",
                    linerate_lab::EmulatorKind::Userspace => "userspace",
                },
                s.nodes
                    .iter()
                    .map(|n| n.name.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            )),
            Err(e) => out.push_str(&format!("?\tunreadable: {e}\n")),
        }
    }
    out
}

/// `lab list --json`.
pub fn list_json(labs: &[Result<LabState, LabError>]) -> Value {
    let labs: Vec<Value> = labs
        .iter()
        .map(|l| match l {
            Ok(s) => serde_json::to_value(s).unwrap_or(Value::Null),
            Err(e) => json!({ "error": e.to_string() }),
        })
        .collect();
    json!({ "schema": "linerate.lab-list/1", "labs": labs })
}

/// `lab down` as text.
pub fn down_text(r: &DownReport) -> String {
    format!(
        "lab {} down: removed {} namespace(s){}, killed {} process(es)\n",
        r.name,
        r.namespaces_removed.len(),
        if r.had_state {
            ""
        } else {
            " (no state file was left)"
        },
        r.processes_killed.len()
    )
}

/// `lab down --json`.
pub fn down_json(r: &DownReport) -> Value {
    let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert("schema".into(), json!("linerate.lab-down/1"));
    }
    v
}

/// `lab set` as text.
pub fn set_text(writes: &[SysctlWrite]) -> String {
    writes
        .iter()
        .map(|w| format!("{}: {} = {} (was {})\n", w.node, w.key, w.after, w.before))
        .collect()
}

/// `lab set --json`.
pub fn set_json(name: &LabName, writes: &[SysctlWrite]) -> Value {
    json!({ "schema": "linerate.lab-sysctl/1", "lab": name.as_str(), "writes": writes })
}

/// The rfc2544 search settings a workload sets (`pdr 0.1%, phases 3`); `None` when it sets
/// none (the defaults of `lab rfc2544`).
fn search_settings(w: &linerate_lab::experiment::Workload) -> Option<String> {
    let mut set = Vec::new();
    if let Some(p) = w.pdr {
        set.push(format!("pdr {p}"));
    }
    if let Some(p) = w.width {
        set.push(format!("width {p}"));
    }
    if let Some(n) = w.phases {
        set.push(format!("phases {n}"));
    }
    if let Some(n) = w.repeat {
        set.push(format!("repeat {n}"));
    }
    if let Some(d) = w.initial_trial {
        set.push(format!("initial trial {d}"));
    }
    if w.latency == Some(false) {
        set.push("no latency trials".to_owned());
    }
    (!set.is_empty()).then(|| set.join(", "))
}

/// `lab check` as text: the plan of an experiment.
pub fn experiment_text(e: &linerate_lab::experiment::Experiment) -> String {
    let n = e.variants.len();
    let secs: f64 = e
        .variants
        .iter()
        .map(|v| v.workload.duration.as_secs_f64())
        .sum::<f64>()
        * f64::from(e.repetitions);
    let mut out = format!(
        "experiment {}: {} variant(s) x {} repetition(s) = {} runs, {:.0} s of load; lab {} ({})\n",
        e.name,
        n,
        e.repetitions,
        n as u64 * u64::from(e.repetitions),
        secs,
        e.lab_name,
        e.variants
            .first()
            .map_or("-".to_owned(), |v| v.spec.topology.to_string()),
    );
    if let Some(d) = &e.description {
        out.push_str(&format!("  {d}\n"));
    }
    for (i, v) in e.variants.iter().enumerate() {
        let w = &v.workload;
        out.push_str(&format!(
            "  {}{}: {}{} for {}, {} stream(s)\n",
            v.name,
            if i == 0 { " (baseline)" } else { "" },
            w.mode,
            match w.generator {
                Some(linerate_lab::experiment::PpsGenerator::Frames) => " (frames: linerate gen)",
                Some(linerate_lab::experiment::PpsGenerator::Socket) => " (UDP sockets)",
                None => "",
            },
            w.duration,
            w.streams
        ));
        if let Some(search) = search_settings(w) {
            out.push_str(&format!("      search: {search}\n"));
        }
        for (l, link) in v.spec.links.iter().enumerate() {
            let emu = link
                .emulation
                .as_ref()
                .map_or("not emulated".to_owned(), |e| {
                    format!("fwd {} | rev {}", e[0].describe(), e[1].describe())
                });
            out.push_str(&format!(
                "      l{l}: mtu {}, offloads {}, {emu}\n",
                link.mtu,
                if link.offloads { "on" } else { "off" }
            ));
        }
        for s in &v.spec.sysctls {
            out.push_str(&format!(
                "      sysctl {}:{} = {}\n",
                s.node, s.key, s.value
            ));
        }
        if let Some(f) = &v.firewall {
            out.push_str(&format!("      firewall {f}\n"));
        }
        if let Some(t) = &v.spec.tunnel {
            out.push_str(&format!("      tunnel {t}\n"));
        }
    }
    let letters: Vec<String> = (0..n)
        .map(|i| {
            if i < 26 {
                ((b'A' + i as u8) as char).to_string()
            } else {
                format!("V{i}")
            }
        })
        .collect();
    out.push_str(&format!(
        "  order: ({}) x {}, interleaved\n",
        letters.join(" "),
        e.repetitions
    ));
    out
}

/// A measured value with its unit, for humans.
pub fn quantity(value: f64, unit: &str) -> String {
    match unit {
        "bit/s" => format!("{:.1}", linerate_units::BitRate::from_bps_f64(value)),
        "packet/s" => format!("{:.1} kpps", value / 1e3),
        other => format!("{value:.3} {other}"),
    }
}

/// `  limit: send buffer (5/5)`: the limit most of a variant's TCP runs named, and how many
/// of its runs named one; empty when none did.
fn dominant_limit(r: &linerate_lab::runner::ExperimentResult, variant: &str) -> String {
    let kinds: Vec<_> = r
        .runs
        .iter()
        .filter(|x| x.variant == variant)
        .filter_map(|x| x.measure.as_ref()?.document.as_ref()?.iperf3())
        .filter_map(|d| Some(d.linerate.as_ref()?.limit.as_ref()?.kind))
        .collect();
    match linerate_explain::tcp::dominant(&kinds) {
        Some((kind, n)) => format!("  limit: {} ({n}/{})", kind.describe(), kinds.len()),
        None => String::new(),
    }
}

/// `lab run` as text: per variant the mean ± standard deviation with min … max and N, and
/// against the baseline (the first variant) ministat's verdict at the experiment's confidence.
pub fn run_text(
    e: &linerate_lab::experiment::Experiment,
    r: &linerate_lab::runner::ExperimentResult,
) -> String {
    let mut out = format!(
        "experiment {} ({} repetitions, load: {}, lab {})\n",
        r.experiment, e.repetitions, r.load, r.lab
    );
    if let Some(sig) = r.interrupted {
        out.push_str(&format!(
            "interrupted by {} after {} of {} runs: the summary so far\n",
            crate::stop::name(crate::stop::from_number(sig)),
            r.runs.len(),
            e.variants.len() * e.repetitions as usize
        ));
    }
    let width = r.variants.iter().map(|v| v.name.len()).max().unwrap_or(8);
    for (i, v) in r.variants.iter().enumerate() {
        let unit = v.unit.unwrap_or("");
        let s = &v.summary;
        let mut line = if v.values.is_empty() {
            format!("  {:<width$}  no successful run", v.name)
        } else {
            format!(
                "  {:<width$}  {} ± {}  ({} … {}, N={})",
                v.name,
                quantity(s.mean, unit),
                quantity(if s.stddev.is_finite() { s.stddev } else { 0.0 }, unit),
                quantity(s.min, unit),
                quantity(s.max, unit),
                s.n
            )
        };
        if i == 0 {
            line.push_str("  baseline");
        }
        line.push_str(&dominant_limit(r, &v.name));
        if v.failed > 0 {
            line.push_str(&format!("  ({} failed)", v.failed));
        }
        out.push_str(&line);
        out.push('\n');
    }
    // One line per variant against the baseline, in the variants' unit.
    if let Some(base) = r.variants.first().filter(|_| r.variants.len() > 1) {
        out.push_str(&format!(
            "\nagainst {} (Student's t, {} % confidence):\n",
            base.name,
            number(r.confidence.percent(), Digits::Max(1))
        ));
        for v in r.variants.iter().skip(1) {
            let unit = v.unit.or(base.unit).unwrap_or("bit/s");
            match &v.vs_baseline {
                Some(c) => {
                    out.push_str(&format!(
                        "  {}\n",
                        crate::cmd::lab::verdict::line(&v.name, width, &c.outcome, unit)
                    ));
                }
                None => out.push_str(&format!(
                    "  {:<width$}  no comparison: needs at least 2 successful runs of this variant and of the baseline\n",
                    v.name
                )),
            }
        }
    }
    if let Some(sweep) = &e.sweep {
        if sweep.bases.is_empty() {
            out.push_str(&sweep_curve(&sweep.parameter, &sweep.values, r));
        } else {
            out.push_str(&grid::table(sweep, r));
        }
    }
    out.push_str(&super::tunnel::run_lines(e, r));
    for run in r.runs.iter().filter(|x| x.error.is_some()) {
        out.push_str(&format!(
            "  run {} of {} failed: {}\n",
            run.slot.repetition + 1,
            run.variant,
            run.error.as_deref().unwrap_or("")
        ));
    }
    out
}

/// A sweep's ASCII curve: one bar per value scaled to the best mean, then the best value and
/// whether it beats the runner-up at the experiment's confidence.
fn sweep_curve(
    parameter: &str,
    values: &[String],
    r: &linerate_lab::runner::ExperimentResult,
) -> String {
    let means: Vec<f64> = r.variants.iter().map(|v| v.summary.mean).collect();
    let best = means
        .iter()
        .copied()
        .filter(|m| m.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    if !best.is_finite() || best <= 0.0 {
        return String::new();
    }
    let width = values.iter().map(String::len).max().unwrap_or(1);
    let unit = r.variants.iter().find_map(|v| v.unit).unwrap_or("");
    let mut out = format!("\n  {parameter}\n");
    for (value, mean) in values.iter().zip(&means) {
        let bar = if mean.is_finite() {
            ((mean / best) * 50.0).round() as usize
        } else {
            0
        };
        out.push_str(&format!(
            "  {value:>width$} |{:<50}| {}\n",
            "#".repeat(bar),
            quantity(*mean, unit)
        ));
    }
    let Some(bi) = means.iter().position(|m| *m == best) else {
        return out;
    };
    out.push_str(&format!(
        "  best mean: {parameter} = {} ({})\n",
        values[bi],
        quantity(best, unit)
    ));
    let runner_up = means
        .iter()
        .enumerate()
        .filter(|(i, m)| *i != bi && m.is_finite())
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, _)| i);
    if let Some(ri) = runner_up {
        if let Some(v) = r.verdict(ri, bi) {
            let line = crate::cmd::lab::verdict::line("", 0, &v.outcome, unit);
            out.push_str(&format!(
                "  against the runner-up ({} = {}):{line}\n",
                parameter, values[ri]
            ));
        } else {
            out.push_str("  (the best value's confidence needs at least 2 runs per value: --repeat 2 or more)\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use linerate_lab::runner::{ExperimentResult, VariantResult};

    fn variant(name: &str, values: &[f64]) -> VariantResult {
        VariantResult {
            name: name.into(),
            unit: Some("bit/s"),
            values: values.to_vec(),
            failed: 0,
            summary: linerate_stats::Summary::of(values),
            vs_baseline: None,
        }
    }

    #[test]
    fn show_states_the_rate_layer_and_netems_packet_overhead() {
        use linerate_lab::impair::{Impairment, RateLayer};
        use linerate_lab::state::EmulatorKind;
        let rated = |layer| Impairment {
            rate: Some(linerate_units::BitRate::from_gbps(1)),
            rate_layer: layer,
            limit: 1000,
            ..Impairment::default()
        };
        let none = Impairment::default();
        assert_eq!(
            rate_layer_line(&none, &none, EmulatorKind::Kernel),
            None,
            "no rate, nothing to say"
        );
        let kernel =
            rate_layer_line(&rated(RateLayer::L1), &none, EmulatorKind::Kernel).unwrap_or_default();
        assert!(kernel.contains("rate counted at L1, the wire"), "{kernel}");
        assert!(
            kernel.contains("netem paces with packet overhead 24 B (`rate RATE 24`)"),
            "{kernel}"
        );
        let user = rate_layer_line(&none, &rated(RateLayer::L2), EmulatorKind::Userspace)
            .unwrap_or_default();
        assert!(
            user.contains("rate counted at L2") && !user.contains("netem"),
            "{user}"
        );
        let kernel_l2 =
            rate_layer_line(&rated(RateLayer::L2), &none, EmulatorKind::Kernel).unwrap_or_default();
        assert!(kernel_l2.contains("packet overhead 0 B"), "{kernel_l2}");
    }

    #[test]
    fn sweep_curve_scales_bars_to_the_best_mean_and_names_it() {
        let r = ExperimentResult {
            schema: linerate_lab::runner::SCHEMA,
            experiment: "s".into(),
            lab: "x".into(),
            load: "iperf3",
            confidence: linerate_stats::Confidence::P95,
            runs: vec![],
            variants: vec![variant("a", &[25e6, 25e6]), variant("b", &[99e6, 101e6])],
            interrupted: None,
        };
        let text = sweep_curve("link.mtu", &["1500".into(), "9000".into()], &r);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[2],
            format!("  1500 |{:<50}| 25.0 Mbit/s", "#".repeat(13))
        );
        assert_eq!(
            lines[3],
            format!("  9000 |{}| 100.0 Mbit/s", "#".repeat(50))
        );
        assert_eq!(lines[4], "  best mean: link.mtu = 9000 (100.0 Mbit/s)");
        assert_eq!(
            lines[5],
            "  against the runner-up (link.mtu = 1500):  +75.0 ± 4.3 Mbit/s  (+300.0 % ± 17.2 %)  proven at 95 %"
        );
        assert_eq!(quantity(252_600.0, "packet/s"), "252.6 kpps");
    }
}
