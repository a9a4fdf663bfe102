//! The rfc2544 workload's search keys (`pdr`, `width`, `phases`, `repeat`, `initial_trial`,
//! `latency`): the settings `linerate lab rfc2544` takes as flags, with the same limits. Absent keys leave
//! the search's defaults; in any other mode a key is an error naming it.

use std::ops::Range;

use linerate_units::{Duration, Percent};
use toml::Spanned;

use super::raw::{RawWorkload, Scalar};
use super::{Ctx, ExperimentError, WorkloadMode};
use crate::rfc2544::search::{MAX_PHASES, MAX_REPEATS, MAX_WIDTH};

/// The search settings a workload sets.
#[derive(Debug, Default)]
pub(super) struct Options {
    pub pdr: Option<Percent>,
    pub width: Option<Percent>,
    pub phases: Option<u32>,
    pub repeat: Option<u32>,
    pub initial_trial: Option<Duration>,
    /// Latency trials at 10/50/90 % of NDR (`None`: yes).
    pub latency: Option<bool>,
}

/// A share written like `lab rfc2544 --pdr` takes it (`"0.5%"`), strictly between 0 and `below`
/// percent.
fn share(
    ctx: &Ctx<'_>,
    v: &Spanned<Scalar>,
    field: &str,
    below: f64,
) -> Result<Percent, ExperimentError> {
    let p = v
        .get_ref()
        .text()
        .parse::<Percent>()
        .map_err(|e| ctx.err(v.span(), field, e.to_string()))?;
    if p.percent() > 0.0 && p.percent() < below {
        Ok(p)
    } else {
        Err(ctx.err(
            v.span(),
            field,
            format!("{p}: must be more than 0 and less than {below} %"),
        ))
    }
}

fn count(ctx: &Ctx<'_>, v: &Spanned<i64>, field: &str, most: u32) -> Result<u32, ExperimentError> {
    let n = *v.get_ref();
    match u32::try_from(n) {
        Ok(c) if (1..=most).contains(&c) => Ok(c),
        _ => Err(ctx.err(
            v.span(),
            field,
            format!("{n}: must be between 1 and {most}"),
        )),
    }
}

/// The search keys of `w`, checked against its mode and final trial `duration`.
pub(super) fn options(
    ctx: &Ctx<'_>,
    w: &RawWorkload,
    mode: WorkloadMode,
    duration: Duration,
) -> Result<Options, ExperimentError> {
    let spans: [(&str, Option<Range<usize>>); 6] = [
        ("pdr", w.pdr.as_ref().map(Spanned::span)),
        ("width", w.width.as_ref().map(Spanned::span)),
        ("phases", w.phases.as_ref().map(Spanned::span)),
        ("repeat", w.repeat.as_ref().map(Spanned::span)),
        ("initial_trial", w.initial_trial.as_ref().map(Spanned::span)),
        ("latency", w.latency.as_ref().map(Spanned::span)),
    ];
    if mode != WorkloadMode::Rfc2544 {
        // The first one written, so the error points at the top-most.
        if let Some((key, span)) = spans
            .into_iter()
            .filter_map(|(k, s)| Some((k, s?)))
            .min_by_key(|(_, s)| s.start)
        {
            return Err(ctx.err(
                span,
                &format!("workload.{key}"),
                format!(
                    "sets the RFC 2544 search, which only mode = \"rfc2544\" has (this workload's \
                     mode is {mode})"
                ),
            ));
        }
        return Ok(Options::default());
    }
    let pdr = w
        .pdr
        .as_ref()
        .map(|v| share(ctx, v, "workload.pdr", 100.0))
        .transpose()?;
    let width = w
        .width
        .as_ref()
        .map(|v| share(ctx, v, "workload.width", MAX_WIDTH * 100.0))
        .transpose()?;
    let phases = w
        .phases
        .as_ref()
        .map(|v| count(ctx, v, "workload.phases", MAX_PHASES))
        .transpose()?;
    let repeat = w
        .repeat
        .as_ref()
        .map(|v| count(ctx, v, "workload.repeat", MAX_REPEATS))
        .transpose()?;
    let initial_trial = w
        .initial_trial
        .as_ref()
        .map(|v| {
            let field = "workload.initial_trial";
            let d = v
                .get_ref()
                .text()
                .parse::<Duration>()
                .map_err(|e| ctx.err(v.span(), field, e.to_string()))?;
            if d == Duration::ZERO {
                Err(ctx.err(v.span(), field, "must be more than 0"))
            } else if d > duration {
                Err(ctx.err(
                    v.span(),
                    field,
                    format!("{d} is longer than workload.duration {duration} (the final trials)"),
                ))
            } else {
                Ok(d)
            }
        })
        .transpose()?;
    Ok(Options {
        pdr,
        width,
        phases,
        repeat,
        initial_trial,
        latency: w.latency.as_ref().map(|v| *v.get_ref()),
    })
}
