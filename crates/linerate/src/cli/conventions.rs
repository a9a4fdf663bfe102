//! The command-line conventions (README "Conventions"), checked over clap's whole command tree.
//!
//! The rules are data: a table of flag names ([`FLAGS`]), reserved short flags
//! ([`RESERVED_SHORTS`]), value-name vocabulary per quantity ([`QUANTITIES`]) and the few
//! places where a command keeps another tool's spelling ([`EXCEPTIONS`], each with why). A new
//! subcommand is checked as soon as it is in [`crate::cli::Command`]; when a rule cannot fit
//! it, add a commented entry to [`EXCEPTIONS`] rather than bending the rule.

use std::ffi::OsStr;

use clap::{Arg, ArgAction, Command, CommandFactory};

use crate::cli::Cli;

/// A flag with a conventional meaning: wherever a command has it, it is spelled this way.
struct FlagRule {
    long: &'static str,
    /// The short form it must have (`None`: it has none).
    short: Option<char>,
    /// Its value name (`None`: a switch, no value).
    value: Option<&'static [&'static str]>,
    /// The help text must contain this (what makes the flag mean the same everywhere).
    help_says: Option<&'static str>,
}

const FLAGS: &[FlagRule] = &[
    FlagRule {
        long: "duration",
        short: Some('t'),
        value: Some(&["DURATION"]),
        help_says: None,
    },
    FlagRule {
        long: "interval",
        short: Some('i'),
        value: Some(&["DURATION"]),
        help_says: None,
    },
    FlagRule {
        long: "count",
        short: None,
        value: Some(&["N"]),
        help_says: None,
    },
    FlagRule {
        long: "confidence",
        short: None,
        value: Some(&["PERCENT"]),
        help_says: None,
    },
    FlagRule {
        long: "json",
        short: None,
        value: None,
        help_says: Some("linerate."),
    },
    FlagRule {
        long: "json-stream",
        short: None,
        value: None,
        help_says: None,
    },
    // --format names what is printed; what is read is --input-format.
    FlagRule {
        long: "format",
        short: None,
        value: Some(&["FORMAT"]),
        help_says: Some("Output format"),
    },
    FlagRule {
        long: "input-format",
        short: None,
        value: Some(&["FORMAT"]),
        help_says: None,
    },
    FlagRule {
        long: "db",
        short: None,
        value: Some(&["PATH"]),
        help_says: None,
    },
    FlagRule {
        long: "no-store",
        short: None,
        value: None,
        help_says: None,
    },
    FlagRule {
        long: "quiet",
        short: Some('q'),
        value: None,
        help_says: None,
    },
    FlagRule {
        long: "dry-run",
        short: None,
        value: None,
        help_says: None,
    },
    FlagRule {
        long: "output",
        short: Some('o'),
        value: Some(&["FILE", "DIR"]),
        help_says: None,
    },
];

/// Old spellings: they may stay as hidden aliases, never as a flag's name.
const RETIRED_LONGS: &[(&str, &str)] = &[("time", "duration")];

/// Short flags that mean one thing everywhere: only the flag named here may use them.
const RESERVED_SHORTS: &[(char, &str)] = &[
    ('t', "duration"),
    ('i', "interval"),
    ('q', "quiet"),
    ('o', "output"),
    (
        'c',
        "(nothing: -c is ministat's confidence in stat and iperf3's connect in client)",
    ),
];

/// Value names by quantity: a flag whose value parses to one of these types is named so.
/// `BYTES` is a plain byte count (MTU, MSS, frame size), where a bare number is the habit.
fn quantity_of(arg: &Arg) -> Option<(&'static str, &'static [&'static str])> {
    use std::any::TypeId;
    let id = arg.get_value_parser().type_id();
    let table: [(TypeId, &str, &[&str]); 5] = [
        (
            TypeId::of::<linerate_units::Duration>(),
            "duration",
            &["DURATION"],
        ),
        (
            TypeId::of::<linerate_units::BitRate>(),
            "bit rate",
            &["RATE"],
        ),
        (
            TypeId::of::<linerate_units::ByteSize>(),
            "size",
            &["SIZE", "BYTES"],
        ),
        (
            TypeId::of::<linerate_units::PacketRate>(),
            "packet rate",
            &["PPS"],
        ),
        (
            TypeId::of::<linerate_units::Percent>(),
            "percentage",
            &["PERCENT"],
        ),
    ];
    table
        .into_iter()
        .find(|(t, _, _)| id == *t)
        .map(|(_, what, names)| (what, names))
}

/// Flags whose value is a bare number by the user's habit (iperf3's `-t -O -i` seconds; the
/// byte counts named BYTES are matched by their value name).
const BARE_BY_HABIT: &[&str] = &["duration", "interval", "omit"];

/// Where a command keeps another tool's spelling, by (command path, flag id).
const EXCEPTIONS: &[(&str, &str, &str)] = &[
    // stat is a drop-in for ministat: its one-letter flags are ministat's.
    ("stat", "quiet", "ministat's -q (no names), not --quiet"),
    ("stat", "confidence", "ministat's -c PERCENT"),
    // client is iperf3's client: its flags are iperf3's.
    ("client", "connect", "iperf3's -c HOST"),
    (
        "client",
        "json",
        "iperf3's -J, and iperf3's own schema (plus a `linerate` object)",
    ),
    ("client", "len", "iperf3's -l: bytes by habit"),
    ("client", "window", "iperf3's -w: bytes by habit"),
    ("client", "bytes", "iperf3's -n: bytes by habit"),
    (
        "client",
        "bitrate",
        "iperf3's -b: bits/s by habit (and 0 = unlimited)",
    ),
    // show --json prints the run in iperf3's schema, with linerate.run/1 inside.
    ("show", "json", "iperf3's schema"),
];

fn excepted(path: &str, id: &str) -> bool {
    EXCEPTIONS.iter().any(|&(p, a, _)| p == path && a == id)
}

/// Every visible command with its path (`lab run`), the root included.
fn commands() -> Vec<(String, Command)> {
    fn walk(prefix: &str, cmd: &Command, out: &mut Vec<(String, Command)>) {
        out.push((prefix.to_owned(), cmd.clone()));
        for sub in cmd.get_subcommands() {
            if sub.is_hide_set() || sub.get_name() == "help" {
                continue;
            }
            let path = if prefix.is_empty() {
                sub.get_name().to_owned()
            } else {
                format!("{prefix} {}", sub.get_name())
            };
            walk(&path, sub, out);
        }
    }
    let mut root = Cli::command();
    root.build();
    let mut out = Vec::new();
    walk("", &root, &mut out);
    out
}

fn takes_value(arg: &Arg) -> bool {
    matches!(arg.get_action(), ArgAction::Set | ArgAction::Append)
}

fn value_names(arg: &Arg) -> Vec<String> {
    arg.get_value_names()
        .map(|v| v.iter().map(ToString::to_string).collect())
        .unwrap_or_default()
}

fn help(arg: &Arg) -> String {
    arg.get_long_help()
        .or(arg.get_help())
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// The user-visible flags of a command (not help/version, not positionals).
fn flags(cmd: &Command) -> impl Iterator<Item = &Arg> {
    cmd.get_arguments().filter(|a| {
        !a.is_positional()
            && !a.is_hide_set()
            && !matches!(
                a.get_action(),
                ArgAction::Help | ArgAction::HelpLong | ArgAction::Version
            )
    })
}

#[test]
fn flags_follow_the_conventions_table() {
    let mut broken = Vec::new();
    for (path, cmd) in commands() {
        for arg in flags(&cmd) {
            let id = arg.get_id().as_str();
            let name = format!("`linerate {path}` {id}");
            if excepted(&path, id) {
                continue;
            }
            if let Some(long) = arg.get_long() {
                if let Some((_, new)) = RETIRED_LONGS.iter().find(|(old, _)| *old == long) {
                    broken.push(format!(
                        "{name}: --{long} is an old spelling; name it --{new}"
                    ));
                }
                if let Some(rule) = FLAGS.iter().find(|r| r.long == long) {
                    if arg.get_short() != rule.short {
                        broken.push(format!(
                            "{name}: --{long} has short {:?}, the convention is {:?}",
                            arg.get_short(),
                            rule.short
                        ));
                    }
                    match rule.value {
                        None if takes_value(arg) => {
                            broken.push(format!("{name}: --{long} is a switch, it takes no value"));
                        }
                        Some(names)
                            if !value_names(arg).iter().any(|v| names.contains(&v.as_str())) =>
                        {
                            broken.push(format!(
                                "{name}: --{long} <{}> should be <{}>",
                                value_names(arg).join(" "),
                                names.join("|")
                            ));
                        }
                        _ => {}
                    }
                    if let Some(says) = rule.help_says {
                        if !help(arg).contains(says) {
                            broken.push(format!(
                                "{name}: the help of --{long} should say {says:?}: {:?}",
                                help(arg)
                            ));
                        }
                    }
                    if long == "db" && arg.get_env() != Some(OsStr::new("LINERATE_DB")) {
                        broken.push(format!("{name}: --db reads LINERATE_DB"));
                    }
                }
            }
            if let Some(short) = arg.get_short() {
                if let Some((_, owner)) = RESERVED_SHORTS.iter().find(|(s, _)| *s == short) {
                    if arg.get_long() != Some(*owner) {
                        broken.push(format!("{name}: -{short} is reserved for --{owner}"));
                    }
                }
            }
        }
    }
    assert!(
        broken.is_empty(),
        "convention breaches:\n{}",
        broken.join("\n")
    );
}

/// Whether a value name names a quantity that must carry its unit (`DURATION`,
/// `[TARGET=]RATE`, …).
fn unit_required_by_name(arg: &Arg) -> bool {
    value_names(arg).iter().any(|v| {
        ["DURATION", "RATE", "SIZE", "PPS"]
            .iter()
            .any(|q| v == q || v.ends_with(&format!("]{q}")) || v.ends_with(&format!("={q}")))
    })
}

/// What clap says when the command at `path` is given `--flag value` (the value is parsed
/// as it is read, before any check of required arguments).
fn parse_error(path: &str, arg: &Arg, value: &str) -> Option<String> {
    let mut argv = vec!["linerate".to_owned()];
    argv.extend(path.split_whitespace().map(str::to_owned));
    let flag = match (arg.get_long(), arg.get_short()) {
        (Some(l), _) => format!("--{l}"),
        (None, Some(s)) => format!("-{s}"),
        (None, None) => return None,
    };
    argv.push(flag);
    argv.push(value.to_owned());
    match Cli::command().try_get_matches_from(argv) {
        Err(e) if e.kind() == clap::error::ErrorKind::ValueValidation => Some(e.to_string()),
        Err(e) if e.kind() == clap::error::ErrorKind::UnknownArgument => Some(e.to_string()),
        _ => None,
    }
}

#[test]
fn quantities_are_named_and_need_their_unit() {
    let mut broken = Vec::new();
    for (path, cmd) in commands() {
        for arg in flags(&cmd).filter(|a| takes_value(a)) {
            let id = arg.get_id().as_str();
            let name = format!("`linerate {path}` --{}", arg.get_long().unwrap_or(id));
            if let Some((what, names)) = quantity_of(arg) {
                if !value_names(arg).iter().any(|v| names.contains(&v.as_str())) {
                    broken.push(format!(
                        "{name} <{}>: a {what} is named <{}>",
                        value_names(arg).join(" "),
                        names.join("|")
                    ));
                }
            }
            if !unit_required_by_name(arg) && quantity_of(arg).is_none() {
                continue;
            }
            if value_names(arg)
                .iter()
                .any(|v| v == "BYTES" || v == "PERCENT")
            {
                continue;
            }
            let habit =
                arg.get_long().is_some_and(|l| BARE_BY_HABIT.contains(&l)) || excepted(&path, id);
            match (parse_error(&path, arg, "80"), habit) {
                (None, false) => broken.push(format!("{name}: a bare 80 is accepted")),
                (Some(e), false) if !e.contains("needs a unit") => {
                    broken.push(format!(
                        "{name}: a bare 80 is refused, but not for its unit: {e}"
                    ));
                }
                (Some(e), true) => broken.push(format!("{name}: a bare 80 is the habit here: {e}")),
                _ => {}
            }
            match parse_error(&path, arg, "-10") {
                Some(e) if e.contains("negative") => {}
                other => broken.push(format!("{name}: -10 is not refused as negative: {other:?}")),
            }
        }
    }
    assert!(
        broken.is_empty(),
        "unit rule breaches:\n{}",
        broken.join("\n")
    );
}

#[test]
fn every_help_ends_with_examples() {
    let missing: Vec<String> = commands()
        .into_iter()
        .filter(|(_, cmd)| {
            let after = [cmd.get_after_help(), cmd.get_after_long_help()];
            !after
                .iter()
                .flatten()
                .any(|h| h.to_string().contains("Examples:\n  linerate "))
        })
        .map(|(path, _)| format!("`linerate {path}`"))
        .collect();
    assert!(
        missing.is_empty(),
        "no Examples: in the help of {}",
        missing.join(", ")
    );
}

#[test]
fn the_exceptions_name_real_flags() {
    // An exception for a flag that no longer exists hides nothing; remove it.
    let all = commands();
    for (path, id, why) in EXCEPTIONS {
        let found = all
            .iter()
            .any(|(p, cmd)| p == path && cmd.get_arguments().any(|a| a.get_id() == id));
        assert!(found, "exception ({path}, {id}: {why}) names no flag");
    }
}
