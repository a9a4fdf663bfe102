//! The flags of an RFC 2544 search, which `lab rfc2544` and `rfc2544` share, and the
//! procedure's plan they make (checked here, so an error names the flag).

use anyhow::bail;
use linerate_calc::ethernet::FrameSpec;
use linerate_lab::rfc2544::bed::LinkRate;
use linerate_lab::rfc2544::procedure::{self, Plan};
use linerate_lab::rfc2544::search;
use linerate_store::rfc2544::{SearchMethod, Settings};
use linerate_units::{BitRate, Duration, Percent};

/// The search's flags.
#[derive(Debug, clap::Args)]
pub struct SearchArgs {
    /// Frame sizes with FCS, searched one after the other: 64, 1518, imix, or a list
    #[arg(
        long,
        value_name = "FRAMES",
        default_value = "64,512,1518,imix",
        value_delimiter = ','
    )]
    pub frame: Vec<FrameSpec>,
    /// Duration of the final trials
    #[arg(long, value_name = "DURATION", default_value = "10s",
          value_parser = Duration::parse_with_unit, allow_hyphen_values = true)]
    pub trial: Duration,
    /// Duration of the first phase's trials
    #[arg(long, value_name = "DURATION", default_value = "1s",
          value_parser = Duration::parse_with_unit, allow_hyphen_values = true)]
    pub initial_trial: Duration,
    /// Phases of the search (trial duration grows, width halves, from one to the next)
    #[arg(long, value_name = "N", default_value_t = search::DEFAULT_PHASES,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(search::MAX_PHASES)))]
    pub phases: u32,
    /// Width goal: the final lower and upper bounds are at most this far apart
    #[arg(
        long,
        value_name = "PERCENT",
        default_value = "0.5%",
        allow_hyphen_values = true
    )]
    pub width: Percent,
    /// Loss ratio of PDR (partial drop rate); NDR allows none
    #[arg(
        long,
        value_name = "PERCENT",
        default_value = "0.5%",
        allow_hyphen_values = true
    )]
    pub pdr: Percent,
    /// Final trials at --trial each bound must pass
    #[arg(long, value_name = "N", default_value_t = search::DEFAULT_REPEATS,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(search::MAX_REPEATS)))]
    pub repeat: u32,
    /// Most trials of one search (it stops unconverged there)
    #[arg(long, value_name = "N", default_value_t = search::DEFAULT_MAX_TRIALS,
          value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub max_trials: u32,
    /// Link rate for line rate and % of it [default: a lab's l0 rate, else 10 Gbit/s, what
    /// veth reports; real ports: the speed they negotiated]
    #[arg(long, value_name = "RATE", value_parser = BitRate::parse_with_unit,
          allow_hyphen_values = true)]
    pub line_rate: Option<BitRate>,
    /// Duration of the generator-ceiling measurement into the sink
    #[arg(long, value_name = "DURATION", default_value = "2s",
          value_parser = Duration::parse_with_unit, allow_hyphen_values = true)]
    pub headroom_trial: Duration,
    /// Duration of each latency trial [default: --trial]
    #[arg(long, value_name = "DURATION", value_parser = Duration::parse_with_unit,
          allow_hyphen_values = true)]
    pub latency_trial: Option<Duration>,
    /// No latency trials at 10/50/90 % of NDR (they take three more trials per frame size)
    #[arg(long, conflicts_with = "latency_trial")]
    pub no_latency: bool,
    /// Search method: mlr (MLRsearch-style) or binary (the plain RFC 2544 binary search, one
    /// goal after the other, every trial at --trial: for comparison)
    #[arg(long, value_enum, default_value = "mlr")]
    pub search: Method,
    /// Highest load of the search: ceiling (the line rate or the generator's ceiling into the
    /// sink, whichever is lower) or line (the line rate, where a plain RFC 2544 search starts;
    /// loads the generator cannot make count as lost)
    #[arg(long, value_enum, value_name = "FROM", default_value = "ceiling")]
    pub max_load: MaxLoad,
    /// Sending threads of the generator
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..=64))]
    pub threads: u16,
    /// No progress lines on standard error
    #[arg(short, long)]
    pub quiet: bool,
    /// Print the results as JSON (schema linerate.rfc2544/1)
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: crate::cmd::history::db::StoreRunArgs,
}

/// How the throughput is searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Method {
    /// MLRsearch-style: both goals at once, short trials first
    Mlr,
    /// Plain binary search per goal at the final trial duration
    Binary,
}

/// Where the search starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MaxLoad {
    /// The line rate or the generator's ceiling, whichever is lower
    Ceiling,
    /// The line rate
    Line,
}

/// The procedure's plan from the flags.
pub fn plan(a: &SearchArgs) -> anyhow::Result<Plan> {
    let trial_s = a.trial.as_secs_f64();
    let initial_s = a.initial_trial.as_secs_f64();
    if trial_s <= 0.0 || initial_s <= 0.0 || a.headroom_trial.as_secs_f64() <= 0.0 {
        bail!("--trial, --initial-trial and --headroom-trial must be longer than zero");
    }
    if initial_s > trial_s {
        bail!(
            "--initial-trial {} is longer than --trial {}",
            a.initial_trial,
            a.trial
        );
    }
    let width = a.width.fraction();
    if !(width > 0.0 && width < search::MAX_WIDTH) {
        bail!(
            "--width {}: must be more than 0 and less than {} %",
            a.width,
            search::MAX_WIDTH * 100.0
        );
    }
    let pdr = a.pdr.fraction();
    if !(pdr > 0.0 && pdr < 1.0) {
        bail!("--pdr {}: must be more than 0 and less than 100 %", a.pdr);
    }
    Ok(Plan {
        frames: a.frame.clone(),
        settings: Settings {
            trial_s,
            initial_trial_s: initial_s,
            phases: a.phases,
            width,
            pdr_loss_ratio: pdr,
            repeat: a.repeat,
            threads: a.threads,
            search: match a.search {
                Method::Mlr => SearchMethod::Mlr,
                Method::Binary => SearchMethod::Binary,
            },
            latency: !a.no_latency,
        },
        max_trials: a.max_trials,
        max_load: match a.max_load {
            MaxLoad::Ceiling => procedure::MaxLoad::Ceiling,
            MaxLoad::Line => procedure::MaxLoad::Line,
        },
        ceiling_trial_s: a.headroom_trial.as_secs_f64(),
        latency_trial_s: a.latency_trial.map_or(trial_s, |d| d.as_secs_f64()),
        link_rate: a.line_rate.map(|rate| LinkRate {
            rate,
            source: "--line-rate".into(),
        }),
    })
}

/// The longest one count of the plan runs, seconds: its longest trial and the slack the test
/// bed gives a counter (`linerate_lab::rfc2544::external::COUNT_SLACK_S`). A remote counter's
/// server must accept counts this long (its `--max-duration`).
pub fn longest_count(plan: &Plan) -> f64 {
    plan.settings
        .trial_s
        .max(plan.latency_trial_s)
        .max(plan.ceiling_trial_s)
        + linerate_lab::rfc2544::external::COUNT_SLACK_S
}
