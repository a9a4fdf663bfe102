//! A stored run rendered the way a measuring client prints it: a header with the context,
//! one line per stream and interval, then the end-of-test totals.

use std::fmt::Write as _;

use linerate_report::format;
use linerate_store::{Direction, RunId, RunRecord};

/// The human rendering.
pub fn render(id: RunId, run: &RunRecord) -> String {
    let mut out = String::new();
    let dir = match run.direction {
        Direction::Send => "sending to",
        Direction::Reverse => "receiving from",
        Direction::Bidir => "both ways with",
    };
    let _ = writeln!(
        out,
        "Run {id}: {} {} {} {}, {} stream{}, {:.1} s",
        format::utc(run.started_at),
        run.mode,
        dir,
        run.peer.as_deref().unwrap_or("an unknown peer"),
        run.streams,
        if run.streams == 1 { "" } else { "s" },
        run.duration_s,
    );
    let source = match (&run.source_path, &run.command_line) {
        (_, Some(cmd)) => format!("`{cmd}`"),
        (Some(path), None) => format!("imported from {path}"),
        (None, None) => run.source.as_str().to_owned(),
    };
    let _ = writeln!(out, "Measured by {} ({source})", run.tool);
    if let Some(e) = &run.experiment {
        let _ = writeln!(
            out,
            "Experiment {}, variant {}, repetition {}",
            e.experiment, e.variant, e.repetition
        );
    }
    out.push('\n');
    let tcp = run.intervals.iter().any(|s| s.retransmits.is_some());
    let udp = run.intervals.iter().any(|s| s.packets.is_some());
    let _ = writeln!(
        out,
        "[ ID] Interval          Transfer       Bitrate          {}",
        if tcp {
            "Retr  Cwnd"
        } else if udp {
            "Datagrams"
        } else {
            ""
        }
        .trim_end()
    );
    let several = run.intervals.iter().any(|s| s.stream.is_some())
        && run.intervals.iter().filter(|s| s.stream.is_none()).count() < run.intervals.len() / 2
        || run.streams > 1;
    let mut last_index = None;
    for s in &run.intervals {
        // With one stream the sum repeats the stream line: skip it, as iperf3 does.
        if s.stream.is_none() && !several {
            continue;
        }
        if several && last_index.is_some_and(|i| i != s.index) {
            out.push_str("- - - - - - - - - - - - - - - - - - - - - - - - -\n");
        }
        last_index = Some(s.index);
        let id = s
            .stream
            .map_or_else(|| "SUM".to_owned(), |n| format!("{n:>3}"));
        let mut line = format!(
            "[{id}] {:>6.2}-{:<6.2} sec  {:>12}  {:>15}",
            s.start_s,
            s.end_s,
            format::size(s.bytes),
            format::rate(s.bits_per_second),
        );
        if let Some(r) = s.retransmits {
            let cwnd = s.snd_cwnd.map(format::size).unwrap_or_default();
            let _ = write!(line, "  {r:>4}  {cwnd:>9}");
        } else if let Some(p) = s.packets {
            let _ = write!(line, "  {p:>9}");
        } else if tcp {
            line.push_str(&" ".repeat(17));
        }
        if run.direction == Direction::Bidir {
            line.push_str(if s.sender { "  TX" } else { "  RX" });
        }
        if s.omitted {
            line.push_str("  (omitted)");
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str("- - - - - - - - - - - - - - - - - - - - - - - - -\n");
    let _ = writeln!(out, "[ ID] Interval          Transfer       Bitrate");
    let end = run.duration_s;
    for s in &run.stream_results {
        let way = match (run.direction, s.sender) {
            (Direction::Bidir, true) => " (TX)",
            (Direction::Bidir, false) => " (RX)",
            _ => "",
        };
        let _ = writeln!(
            out,
            "[{:>3}]   0.00-{end:<6.2} sec  {:>12}  {:>15}  sender{way}{}",
            s.stream,
            format::size(s.bytes_sent),
            format::rate(s.sent_bps),
            s.retransmits
                .map(|r| format!(", {r} retransmits"))
                .unwrap_or_default(),
        );
        let _ = writeln!(
            out,
            "[{:>3}]   0.00-{end:<6.2} sec  {:>12}  {:>15}  receiver{way}{}",
            s.stream,
            format::size(s.bytes_received),
            format::rate(s.received_bps),
            match (s.lost_packets, s.packets) {
                (Some(l), Some(p)) => format!(", {l}/{p} datagrams lost"),
                _ => String::new(),
            },
        );
    }
    let sum = &run.summary;
    let _ = writeln!(
        out,
        "[SUM]   0.00-{end:<6.2} sec  {:>12}  {:>15}  sender",
        format::size(sum.bytes_sent),
        format::rate(sum.sent_bps)
    );
    let _ = writeln!(
        out,
        "[SUM]   0.00-{end:<6.2} sec  {:>12}  {:>15}  receiver",
        format::size(sum.bytes_received),
        format::rate(sum.received_bps)
    );
    if let Some(rev) = sum.reverse_received_bps {
        let _ = writeln!(out, "Reverse direction: {} received", format::rate(rev));
    }
    if let (Some(j), Some(lost)) = (sum.jitter_ms, sum.lost_percent) {
        let _ = writeln!(out, "Jitter {j:.3} ms, lost {lost:.2}%");
    }
    if let Some(l) = &run.latency {
        let ps: Vec<String> = l
            .percentiles
            .iter()
            .map(|(p, us)| format!("p{p}={us:.1}µs"))
            .collect();
        let _ = writeln!(
            out,
            "Latency: {} transactions{}{}",
            l.count(),
            l.mean_us
                .map(|m| format!(", mean {m:.1}µs"))
                .unwrap_or_default(),
            if ps.is_empty() {
                String::new()
            } else {
                format!(", {}", ps.join(" "))
            }
        );
    }
    if let Some(tps) = sum.transactions_per_second {
        let _ = writeln!(out, "Transactions: {tps:.0}/s");
    }
    if let (Some(l), Some(r)) = (sum.cpu_local_percent, sum.cpu_remote_percent) {
        let _ = writeln!(out, "CPU: local {l:.1}%, remote {r:.1}%");
    }
    // A UDP run's verdict, as the client printed it (stored with the document).
    if let Some(l) = run.document["linerate"]
        .get("udp_limit")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
    {
        out.push_str(&crate::cmd::client::udp_limit::render(&l));
    }
    // A TCP run's verdict likewise.
    if let Some(l) = run.document["linerate"]
        .get("limit")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
    {
        out.push_str(&crate::cmd::client::limit::render(&l));
    }
    out
}
