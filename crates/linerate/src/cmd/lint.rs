//! `linerate lint`: check sysctl.conf / sysctl.d drop-ins, FreeBSD loader.conf, `sysctl -a`
//! dumps and Windows .reg exports against the knob catalogue and the stated target.

pub mod report;
pub mod target;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use linerate_tuning::finding::{FailOn, Summary, sort};
use linerate_tuning::lint::files::{self, FileInfo};
use linerate_tuning::parse::Format;
use linerate_tuning::{Context, Finding, Os};

use crate::output;
use target::TargetArgs;

/// Arguments of `linerate lint`.
#[derive(Debug, clap::Args)]
#[command(after_help = concat!(
    "Severity: error = the setting will fail (no such key on the target version, a value the \
     kernel rejects, a read-only key) or does harm; warning = a measurable cost or risk, shown \
     with its formula and threshold; info = style, redundancy, or outside linerate's knowledge \
     (a key with no rules, or one linerate cannot place, is info[unchecked], never an error).\n\n",
    "Exit status: 0 nothing at or above --fail-on, 1 findings, 2 usage or I/O error.\n\n",
    "Examples:\n",
    "  linerate lint /etc/sysctl.d/*.conf --ram 64GiB --rate 10G --rtt 80ms\n",
    "  linerate lint /boot/loader.conf /etc/sysctl.conf\n",
    "  linerate lint sysctl-a.txt --input-format dump --kernel 5.15 --json",
))]
pub struct Args {
    /// Files to check (sysctl.conf, sysctl.d/*.conf, loader.conf, tuned.conf, `sysctl -a` output,
    /// .reg); a directory stands for its *.conf files
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Target OS: linux, freebsd, openbsd, windows (default: detected from the keys)
    #[arg(long)]
    pub os: Option<Os>,
    /// File grammar: sysctl, loader, dump, reg, tuned (default: detected from the name, e.g.
    /// loader.conf, loader.conf.local, loader.conf.d/*, and the content)
    #[arg(long, value_name = "FORMAT", alias = "format")]
    pub input_format: Option<Format>,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Exit 1 when a finding is at or above: error, warning, info, never
    #[arg(long, default_value = "error", value_name = "SEVERITY")]
    pub fail_on: FailOn,
    /// Machine-readable output (schema linerate.lint/1)
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, serde::Serialize)]
struct LintReport<'a> {
    schema: &'static str,
    files: Vec<FileInfo>,
    context: Vec<&'a Context>,
    summary: Summary,
    findings: &'a [Finding],
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut read = Vec::new();
    for path in files::expand(&args.files)? {
        let name = path.display().to_string();
        let bytes = std::fs::read(&path).with_context(|| format!("cannot open {name}"))?;
        if let Some(at) = output::binary_at(&bytes) {
            bail!(
                "{name}: not a text file (a NUL byte at offset {at}); lint reads sysctl.conf, \
                 sysctl.d, loader.conf, tuned.conf, `sysctl -a` dumps and .reg exports"
            );
        }
        read.push((path, bytes));
    }
    let files::Linted {
        files,
        contexts,
        mut findings,
    } = files::lint_files(&read, args.os, args.input_format, |os| {
        args.target.context(os)
    })?;
    sort(&mut findings);
    if args.json {
        output::print_json(&LintReport {
            schema: "linerate.lint/1",
            files,
            context: contexts.iter().collect(),
            summary: Summary::of(&findings),
            findings: &findings,
        })?;
    } else {
        output::print_text(&report::render(
            &findings,
            "(values in force but not set in any file)",
        ))?;
    }
    Ok(if args.fail_on.tripped(&findings) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
