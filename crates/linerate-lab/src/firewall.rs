//! Firewall variants for a lab node (the DUT, usually), as nftables rulesets applied with
//! `nft -f` inside the node's namespace: none; N stateless rules that never match the lab's
//! traffic before the final accept (what a long, linear ruleset costs); a stateful ruleset
//! with conntrack; or a user's file.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::str::FromStr;

use crate::LabError;
use crate::netns::Netns;

/// One firewall variant.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Firewall {
    /// An empty ruleset.
    None,
    /// `rules` generated stateless rules that never match, then accept.
    Stateless {
        /// Number of non-matching rules each packet is checked against.
        rules: u32,
    },
    /// Connection tracking: established/related accepted, new from 198.18.0.0/15 accepted.
    Stateful,
    /// A user's nftables file, applied as it is (after flushing the node's ruleset).
    File(PathBuf),
}

impl FromStr for Firewall {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let expected = "expected none, stateless:N, stateful or file:PATH";
        match s.split_once(':') {
            None if s == "none" => Ok(Firewall::None),
            None if s == "stateful" => Ok(Firewall::Stateful),
            Some(("stateless", n)) => match n.parse::<u32>() {
                Ok(rules) if rules <= 1_000_000 => Ok(Firewall::Stateless { rules }),
                _ => Err(format!(
                    "stateless:N needs a rule count from 0 to 1000000, got {n:?}"
                )),
            },
            Some(("file", p)) if !p.is_empty() => Ok(Firewall::File(PathBuf::from(p))),
            _ => Err(format!("{expected}, got {s:?}")),
        }
    }
}

impl fmt::Display for Firewall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Firewall::None => f.write_str("none"),
            Firewall::Stateless { rules } => write!(f, "stateless:{rules}"),
            Firewall::Stateful => f.write_str("stateful"),
            Firewall::File(p) => write!(f, "file:{}", p.display()),
        }
    }
}

const HEADER: &str = "flush ruleset\ntable inet linerate {\n";
const BASE_CHAINS: &str = "\tchain input {\n\t\ttype filter hook input priority filter; policy accept;\n\t\tjump rules\n\t}\n\tchain forward {\n\t\ttype filter hook forward priority filter; policy accept;\n\t\tjump rules\n\t}\n";

/// The nftables text of a generated variant (`None` for a user's file). Rules live in one
/// regular chain that both the input and forward hooks jump to, so the same ruleset works on
/// a router and on an end host.
pub fn ruleset(fw: &Firewall) -> Option<String> {
    match fw {
        Firewall::None => Some("flush ruleset\n".to_owned()),
        _ => generated(
            fw,
            HEADER,
            "ip saddr 198.18.0.0/15 ct state new accept\n\t\tdrop",
        ),
    }
}

/// The table a variant's firewall lives in on a real host: the host's own ruleset is left
/// alone, and removing the table undoes the variant.
pub const HOST_TABLE: &str = "linerate_experiment";

/// The nftables text of a generated variant on a real host (`None` for a user's file or
/// `none`): in its own table [`HOST_TABLE`] (replaced if there), and the stateful variant
/// admits new connections from anywhere, so the rules never lock out the ssh that rolls them
/// back.
pub fn host_ruleset(fw: &Firewall) -> Option<String> {
    let header = format!(
        "table inet {HOST_TABLE}\ndelete table inet {HOST_TABLE}\ntable inet {HOST_TABLE} {{\n"
    );
    match fw {
        Firewall::None => None,
        _ => generated(fw, &header, "ct state new accept"),
    }
}

fn generated(fw: &Firewall, header: &str, stateful_new: &str) -> Option<String> {
    let mut out = String::from(header);
    match fw {
        Firewall::File(_) | Firewall::None => return None,
        Firewall::Stateless { rules } => {
            out.push_str("\tchain rules {\n");
            for i in 0..*rules {
                out.push_str(&stateless_rule(i));
            }
            out.push_str("\t\taccept\n\t}\n");
        }
        Firewall::Stateful => {
            out.push_str(&format!(
                "\tchain rules {{\n\t\tct state established,related accept\n\t\tct state invalid drop\n\
                 \t\t{stateful_new}\n\t}}\n"
            ));
        }
    }
    out.push_str(BASE_CHAINS);
    out.push_str("}\n");
    Some(out)
}

/// Rule `i` of the stateless set: realistic 5-tuple filters from 10.0.0.0/8 (never the lab's
/// 198.18.0.0/15), alternating protocols, actions and port shapes.
fn stateless_rule(i: u32) -> String {
    let (a, b, c) = ((i >> 16) & 0xff, (i >> 8) & 0xff, i & 0xff);
    let port = 1024 + (i % 60_000);
    match i % 4 {
        0 => format!("\t\tip saddr 10.{a}.{b}.{c} tcp dport {port} drop\n"),
        1 => format!("\t\tip saddr 10.{a}.{b}.0/24 udp dport {port} drop\n"),
        2 => format!(
            "\t\tip daddr 10.{a}.{b}.{c} tcp dport {{ {port}, {} }} reject\n",
            port + 1
        ),
        _ => format!("\t\tip saddr 10.{a}.{b}.{c} ip daddr 10.{c}.{b}.{a} counter drop\n"),
    }
}

fn nft_missing() -> LabError {
    LabError::MissingTool {
        tool: "nft".to_owned(),
        package: "nftables".to_owned(),
    }
}

/// Whether `nft` can be run.
pub fn nft_available() -> bool {
    Command::new("nft")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn run_nft(args: &[&str], stdin: Option<&str>, node: &str) -> Result<(), LabError> {
    let mut cmd = Command::new("nft");
    cmd.args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            nft_missing()
        } else {
            LabError::Io {
                what: "run nft".into(),
                source: e,
            }
        }
    })?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes())
            .map_err(LabError::io("write the ruleset to nft"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(LabError::io("wait for nft"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(LabError::Firewall {
            node: node.to_owned(),
            reason: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        })
    }
}

/// Applies `fw` in node `node` (namespace `ns`). Returns the number of rules each packet
/// meets (generated variants) or `None` for a user's file.
pub fn apply(ns: &Netns, node: &str, fw: &Firewall) -> Result<Option<u32>, LabError> {
    if !nft_available() {
        return Err(nft_missing());
    }
    if let Firewall::File(path) = fw {
        check_file(path)?;
    }
    // Children inherit the network namespace of the thread that starts them.
    ns.run(|| match fw {
        Firewall::File(path) => {
            run_nft(&["flush", "ruleset"], None, node)?;
            let p = path.to_string_lossy();
            run_nft(&["-f", &p], None, node)?;
            Ok(None)
        }
        other => {
            let text = ruleset(other).unwrap_or_default();
            run_nft(&["-f", "-"], Some(&text), node)?;
            Ok(Some(match other {
                Firewall::Stateless { rules } => *rules + 1,
                Firewall::Stateful => 4,
                _ => 0,
            }))
        }
    })
}

fn check_file(path: &Path) -> Result<(), LabError> {
    std::fs::metadata(path)
        .map(drop)
        .map_err(LabError::io(format!("firewall file {}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_variants_and_names_the_expected_forms() {
        assert_eq!("none".parse(), Ok(Firewall::None));
        assert_eq!(
            "stateless:100".parse(),
            Ok(Firewall::Stateless { rules: 100 })
        );
        assert_eq!("stateful".parse(), Ok(Firewall::Stateful));
        assert_eq!("file:/x.nft".parse(), Ok(Firewall::File("/x.nft".into())));
        for bad in [
            "",
            "stateless",
            "stateless:-1",
            "stateless:x",
            "file:",
            "iptables",
        ] {
            let e = bad.parse::<Firewall>().err().unwrap_or_default();
            assert!(
                e.contains("expected") || e.contains("rule count"),
                "{bad:?}: {e}"
            );
        }
        for s in ["none", "stateless:7", "stateful", "file:/a/b.nft"] {
            assert_eq!(
                s.parse::<Firewall>().map(|f| f.to_string()),
                Ok(s.to_owned())
            );
        }
    }

    #[test]
    fn stateless_rules_never_match_lab_addresses_and_end_in_accept() {
        let text = ruleset(&Firewall::Stateless { rules: 1000 }).unwrap_or_default();
        let rules: Vec<&str> = text
            .lines()
            .filter(|l| l.contains(" drop") || l.contains(" reject"))
            .collect();
        assert_eq!(rules.len(), 1000);
        assert!(
            !text.contains("198.1"),
            "generated rules must not touch the lab's addresses"
        );
        let chain = &text[text.find("chain rules").unwrap_or(0)..];
        let accept = chain.find("\t\taccept").unwrap_or(0);
        assert!(
            chain[..accept].matches(" drop").count() + chain[..accept].matches(" reject").count()
                == 1000
        );
        assert!(text.starts_with("flush ruleset\n"));
    }
}
