//! `linerate nic --watch`: samples counters every interval and renders rates — a screen
//! refreshed in place on a terminal, one line per interval when piped, or JSON lines.

use std::fmt::Write as _;
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

use linerate_probe::watch::{self, Direction, Interval, Sampler, Schedule, Status};
use linerate_probe::{ProbeRoots, check_names, interface};
use linerate_units::human::{Digits, Human};
use linerate_units::{BitRate, PacketRate};

use super::Args;

/// One `--json-stream` line.
#[derive(serde::Serialize)]
struct StreamLine<'a> {
    schema: &'static str,
    sample: u64,
    elapsed_seconds: f64,
    #[serde(flatten)]
    interval: &'a Interval,
}

pub fn run(args: &Args, roots: ProbeRoots) -> anyhow::Result<ExitCode> {
    if !args.interfaces.is_empty() {
        let have = interface::list(&roots).map_err(anyhow::Error::msg)?;
        check_names(&args.interfaces, &have)?;
    }
    let stop = crate::stop::Stop::install()?;
    let screen = !args.json_stream && io::stdout().is_terminal();
    let sampler = Sampler::new(roots, args.interfaces.clone());
    let schedule = Schedule {
        interval: args.interval.as_std(),
        count: args.count,
        duration: args.duration.map(|d| d.as_std()),
    };
    let mut out = io::stdout().lock();
    let each = |n: u64, elapsed: f64, rates: &Interval| -> anyhow::Result<()> {
        if args.json_stream {
            let line = StreamLine {
                schema: watch::SCHEMA,
                sample: n,
                elapsed_seconds: elapsed,
                interval: rates,
            };
            serde_json::to_writer(&mut out, &line)?;
            out.write_all(b"\n")?;
        } else if screen {
            let frame = screen_frame(rates, n, args.count, args.interval, elapsed);
            // Home the cursor and clear the screen, then draw: top-like refresh in place.
            write!(out, "\x1b[H\x1b[2J{frame}")?;
        } else {
            writeln!(out, "{}", line(rates, elapsed))?;
        }
        out.flush()?;
        Ok(())
    };
    let (n, seconds) = watch::run(&sampler, schedule, |at| stop.sleep_until(at), each)?;
    match stop.signal() {
        // Stopped by a signal: the samples shown are the result; say how many, on stderr so
        // a JSON stream stays clean.
        Some(sig) => {
            eprintln!(
                "linerate: {} stopped the watch after {n} interval(s), {seconds:.1} s",
                crate::stop::name(sig),
            );
            Ok(crate::stop::exit_code(sig))
        }
        None => Ok(ExitCode::SUCCESS),
    }
}

/// How a watch column prints a rate: two decimals once a prefix scales it, whole counts below
/// (`0 pps`, `700 pps`, `1.20 kpps`, `9.87 Mbit/s`).
fn column(h: Human) -> Human {
    h.digits(Digits::Decimals(2)).whole_when_unscaled()
}

/// `700`, `1.20k`, `3.45M`: per-queue packet rates in the one-line form.
fn compact(pps: PacketRate) -> String {
    column(pps.human()).compact().to_string()
}

fn pps(p: PacketRate) -> String {
    column(p.human()).to_string()
}

fn bits(r: BitRate) -> String {
    column(r.human()).to_string()
}

fn queue_name(d: Direction, q: u32) -> String {
    match d {
        Direction::Rx => format!("rx{q}"),
        Direction::Tx => format!("tx{q}"),
    }
}

/// One line per interval, for pipes and logs.
fn line(iv: &Interval, elapsed: f64) -> String {
    let mut s = format!("[{elapsed:7.2}s]");
    for i in &iv.interfaces {
        match i.status {
            Status::Ok => {
                let d = |k: &str| i.drops_errors.get(k).copied().unwrap_or(0);
                let _ = write!(
                    s,
                    " {}: rx {} {} tx {} {} drop {}/{} err {}/{}",
                    i.name,
                    pps(i.rx_pps),
                    bits(i.rx_rate),
                    pps(i.tx_pps),
                    bits(i.tx_rate),
                    d("rx_dropped") + d("rx_missed_errors"),
                    d("tx_dropped"),
                    d("rx_errors"),
                    d("tx_errors"),
                );
                if !i.queues.is_empty() {
                    let qs: Vec<String> = i
                        .queues
                        .iter()
                        .map(|q| format!("{} {}", queue_name(q.direction, q.queue), compact(q.pps)))
                        .collect();
                    let _ = write!(s, " [{}]", qs.join(" "));
                }
            }
            status => {
                let _ = write!(
                    s,
                    " {}: {}{}",
                    i.name,
                    status_word(status),
                    i.reason
                        .as_ref()
                        .map_or(String::new(), |r| format!(" ({r})"))
                );
            }
        }
        s.push_str(" |");
    }
    let drops: u64 = iv.softnet.iter().map(|c| c.dropped).sum();
    let squeezes: u64 = iv.softnet.iter().map(|c| c.time_squeeze).sum();
    let _ = write!(s, " softnet drop {drops} squeeze {squeezes}");
    s
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Ok => "ok",
        Status::Gone => "gone",
        Status::New => "new",
        Status::Reset => "reset",
    }
}

/// The full screen for a terminal.
fn screen_frame(
    iv: &Interval,
    n: u64,
    count: Option<u64>,
    every: linerate_units::Duration,
    elapsed: f64,
) -> String {
    let mut s = String::new();
    let of = count.map_or_else(|| "∞".to_owned(), |c| c.to_string());
    let _ = writeln!(
        s,
        "linerate nic --watch   every {}   interval {n}/{of}   {elapsed:.1}s   (Ctrl-C stops)\n",
        every
    );
    let _ = writeln!(
        s,
        "{:<16} {:<6} {:>12} {:>14} {:>12} {:>14} {:>10} {:>8}",
        "IFACE", "QUEUE", "RX PKT/S", "RX BIT/S", "TX PKT/S", "TX BIT/S", "DROPS", "ERRORS"
    );
    for i in &iv.interfaces {
        if i.status != Status::Ok {
            let _ = writeln!(
                s,
                "{:<16} {}{}",
                i.name,
                status_word(i.status),
                i.reason
                    .as_ref()
                    .map_or(String::new(), |r| format!(" ({r})"))
            );
            continue;
        }
        let d = |k: &str| i.drops_errors.get(k).copied().unwrap_or(0);
        let _ = writeln!(
            s,
            "{:<16} {:<6} {:>12} {:>14} {:>12} {:>14} {:>10} {:>8}",
            i.name,
            "total",
            pps(i.rx_pps),
            bits(i.rx_rate),
            pps(i.tx_pps),
            bits(i.tx_rate),
            d("rx_dropped") + d("tx_dropped") + d("rx_missed_errors"),
            d("rx_errors") + d("tx_errors")
        );
        let max_q = i.queues.iter().map(|q| q.queue).max();
        for q in 0..=max_q.unwrap_or(0) {
            let rx = i
                .queues
                .iter()
                .find(|x| x.direction == Direction::Rx && x.queue == q);
            let tx = i
                .queues
                .iter()
                .find(|x| x.direction == Direction::Tx && x.queue == q);
            if rx.is_none() && tx.is_none() {
                continue;
            }
            let cell_p = |x: Option<&watch::QueueRates>| x.map_or("-".to_owned(), |x| pps(x.pps));
            let cell_b =
                |x: Option<&watch::QueueRates>| x.and_then(|x| x.rate).map_or("-".to_owned(), bits);
            let drops: u64 =
                rx.and_then(|x| x.drops).unwrap_or(0) + tx.and_then(|x| x.drops).unwrap_or(0);
            let _ = writeln!(
                s,
                "{:<16} {:<6} {:>12} {:>14} {:>12} {:>14} {:>10} {:>8}",
                "",
                format!("q{q}"),
                cell_p(rx),
                cell_b(rx),
                cell_p(tx),
                cell_b(tx),
                drops,
                ""
            );
        }
    }
    let _ = writeln!(
        s,
        "\n{:<6} {:>14} {:>10} {:>10}",
        "CPU", "SOFTNET", "DROPPED", "SQUEEZED"
    );
    for c in &iv.softnet {
        let _ = writeln!(
            s,
            "{:<6} {:>14} {:>10} {:>10}",
            c.cpu,
            pps(c.pps),
            c.dropped,
            c.time_squeeze
        );
    }
    if let Some(r) = &iv.softnet_unknown {
        let _ = writeln!(s, "softnet unknown ({r})");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_numbers() {
        let compact = |pps| compact(PacketRate::from_pps(pps));
        assert_eq!(compact(0.0), "0");
        assert_eq!(compact(999.4), "999");
        // Rounding carries into the prefix: never "1000".
        assert_eq!(compact(999.6), "1.00k");
        assert_eq!(compact(1200.0), "1.20k");
        assert_eq!(compact(14_880_952.0), "14.88M");
        assert_eq!(compact(1.0e10), "10.00G");
        assert_eq!(bits(BitRate::from_mbps(9870)), "9.87 Gbit/s");
        assert_eq!(pps(PacketRate::from_pps(3.0)), "3 pps");
    }

    fn interval() -> Interval {
        let json = r#"{"interfaces":[
          {"name":"eth2","status":"ok","elapsed_seconds":1.0,"rx_packets":1200,"tx_packets":10,
           "rx_pps":1200.0,"tx_pps":10.0,"rx_rate":9870000,"tx_rate":8000,
           "drops_errors":{"rx_dropped":3,"rx_errors":1},
           "queues":[{"direction":"rx","queue":0,"packets":700,"pps":700.0,"rate":5000000,"drops":null},
                     {"direction":"rx","queue":1,"packets":500,"pps":500.0,"rate":null,"drops":2},
                     {"direction":"tx","queue":0,"packets":10,"pps":10.0,"rate":8000,"drops":null}]},
          {"name":"veth9","status":"gone","reason":"cannot read x","elapsed_seconds":0.0,
           "rx_packets":0,"tx_packets":0,"rx_pps":0.0,"tx_pps":0.0,"rx_rate":0,"tx_rate":0,
           "drops_errors":{},"queues":[]}],
          "softnet":[{"cpu":0,"pps":1200.0,"dropped":0,"time_squeeze":1}]}"#;
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn piped_line_has_totals_queues_and_gone_interfaces() {
        let l = line(&interval(), 1.0);
        assert!(l.starts_with("[   1.00s] eth2: rx 1.20 kpps 9.87 Mbit/s tx 10 pps 8.00 kbit/s drop 3/0 err 1/0 [rx0 700 rx1 500 tx0 10]"), "{l}");
        assert!(l.contains("veth9: gone (cannot read x)"), "{l}");
        assert!(l.ends_with("softnet drop 0 squeeze 1"), "{l}");
    }

    #[test]
    fn screen_has_a_row_per_queue() {
        let s = screen_frame(
            &interval(),
            2,
            Some(5),
            linerate_units::Duration::from_secs(1),
            2.0,
        );
        assert!(s.contains("interval 2/5"), "{s}");
        let q1 = s.lines().find(|l| l.contains(" q1 ")).unwrap();
        assert!(q1.contains("500 pps") && q1.contains(" - "), "{q1}");
        assert!(s.contains("veth9            gone (cannot read x)"), "{s}");
        assert!(
            s.lines()
                .any(|l| l.starts_with("0 ") && l.contains("1.20 kpps")),
            "{s}"
        );
    }
}
