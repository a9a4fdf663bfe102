//! What `lab rfc2544` and `rfc2544` do once they have a test bed: run the one RFC 2544
//! procedure on it with progress on standard error, then store the result as an experiment
//! and print it as a table or JSON (`linerate.rfc2544/1`). A stop between frame sizes prints
//! what was measured and stores nothing.

use std::process::ExitCode;

use linerate_lab::rfc2544::bed::TestBed;
use linerate_lab::rfc2544::procedure::{self, Plan, Progress};
use linerate_units::PacketRate;

use super::render::{self, Report};
use super::search::SearchArgs;
use crate::output;
use crate::stop::Stop;

/// One progress line (for standard error).
fn progress_line(p: &Progress<'_>) -> String {
    let human = |pps: f64| PacketRate::from_pps(pps).human();
    match p {
        Progress::WarmingUp { frame } => format!("frame {frame}: warming up the path"),
        Progress::Ceiling {
            frame,
            sent_pps,
            received_pps,
        } => format!(
            "frame {frame}: the generator alone reaches {} into the sink ({} sent)",
            human(*received_pps),
            human(*sent_pps)
        ),
        Progress::NoCeiling { frame } => {
            format!("frame {frame}: the generator's own ceiling cannot be measured here")
        }
        Progress::Trial {
            load,
            duration,
            counted: c,
            offered,
            short,
            ..
        } => {
            let lost = offered.saturating_sub(c.received) as f64 / (*offered).max(1) as f64 * 100.0;
            let load = human(*load);
            if *short {
                format!(
                    "  trial {load} for {duration:.2} s: the generator sent {} of {offered} \
                     frames (short twice; the rest count as lost), received {} ({lost:.4} % lost)",
                    c.sent, c.received
                )
            } else {
                format!(
                    "  trial {load} for {duration:.2} s: sent {}, received {} ({lost:.4} % lost)",
                    c.sent, c.received
                )
            }
        }
    }
}

/// What is measured and how it is named.
pub struct Bed<'b> {
    /// The test bed.
    pub bed: &'b mut dyn TestBed,
    /// The experiment it is stored as.
    pub experiment: String,
    /// What was measured, for the text's title.
    pub title: String,
    /// The path of one-way latency, for the text.
    pub path: String,
    /// What the failure of the procedure is about (`RFC 2544 throughput of lab demo`).
    pub context: String,
}

/// Runs `plan` on the test bed, then stores and prints its result as `a` asks.
pub fn run(b: Bed<'_>, plan: &Plan, a: &SearchArgs, stop: &Stop) -> anyhow::Result<ExitCode> {
    if let Some(r) = b.bed.repaired() {
        // Said even with --quiet: the test bed was not as the last run should have left it.
        eprintln!("linerate: {}: {r}", b.title);
    }
    let interrupted = || stop.requested();
    let mut say = |p: &Progress<'_>| {
        if !a.quiet {
            eprintln!("{}", progress_line(p));
        }
    };
    let throughput = match procedure::run(b.bed, plan, &interrupted, &mut say) {
        Ok(t) => t,
        Err(_) if stop.requested() => {
            return Ok(crate::stop::exit_code(
                stop.signal()
                    .unwrap_or(linerate_sys::signal::Signal::SIGINT),
            ));
        }
        Err(e) => return Err(anyhow::Error::new(e).context(b.context)),
    };
    let mut report = Report::of(&throughput, b.title, b.path);
    if let Some(sig) = stop.signal() {
        output::print_text(&render::text(&report))?;
        eprintln!(
            "linerate: stopped by {}; nothing was stored",
            crate::stop::name(sig)
        );
        return Ok(crate::stop::exit_code(sig));
    }
    report.stored_as = match crate::cmd::history::db::store_at(&a.store)? {
        Some(at) => linerate_lab::record::record_rfc2544(
            &at,
            &throughput,
            &b.experiment,
            crate::cmd::history::db::host_snapshot(),
        )?,
        None => None,
    };
    if a.json {
        output::print_json(&report)?;
    } else {
        let mut text = render::text(&report);
        match &report.stored_as {
            Some(id) => text.push_str(&format!(
                "\nstored as experiment {id}\nnext: linerate report --experiment {id} -o {id}.html\n"
            )),
            None => text.push_str("\nnot stored (--no-store)\n"),
        }
        output::print_text(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}
