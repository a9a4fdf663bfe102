//! The scheduler's CPU topology, `kern.sched.topology_spec`: an XML tree of CPU groups, each
//! with the cache level its CPUs share, its CPU list and flags (`THREAD`/`SMT`/`HTT` for the
//! hardware threads of one core, `NODE` for a NUMA domain).
//!
//! ```text
//! <groups>
//!  <group level="1" cache-level="3">
//!   <cpu count="8" mask="ff,0,0,0">0, 1, 2, 3, 4, 5, 6, 7</cpu>
//!   <children>
//!    <group level="2" cache-level="2">
//!     <cpu count="2" mask="3,0,0,0">0, 1</cpu>
//!     <flags><flag name="THREAD">THREAD group</flag><flag name="SMT">SMT group</flag></flags>
//! ```
//!
//! Only that vocabulary exists (sys/kern/subr_smp.c, `sysctl_kern_sched_topology_spec_internal`),
//! so this is a small exact reader rather than a general XML parser: anything else is an error
//! with its line.

use super::{Command, ParseError, number, shown};

/// One group of CPUs that share something (a cache, a core, a NUMA domain).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CpuGroup {
    /// Nesting level, 1 for the outermost group.
    pub level: u32,
    /// The cache level the group's CPUs share (0 = none or unknown).
    pub cache_level: u32,
    /// CPU ids in the group.
    pub cpus: Vec<u32>,
    /// The mask as printed (`ff,0,0,0` since 13.1, `0xff` before): kept for the record, the
    /// CPU list is what is used.
    pub mask: String,
    /// Flag names (`THREAD`, `SMT`, `HTT`, `NODE`).
    pub flags: Vec<String>,
    /// Nested groups.
    pub children: Vec<CpuGroup>,
}

impl CpuGroup {
    /// True for the hardware threads of one core.
    pub fn is_smt(&self) -> bool {
        self.flags
            .iter()
            .any(|f| matches!(f.as_str(), "THREAD" | "SMT" | "HTT"))
    }

    /// True for a NUMA domain.
    pub fn is_numa_node(&self) -> bool {
        self.flags.iter().any(|f| f == "NODE")
    }

    fn walk<'a>(&'a self, out: &mut Vec<&'a CpuGroup>) {
        out.push(self);
        for c in &self.children {
            c.walk(out);
        }
    }
}

/// The parsed topology.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CpuTopology {
    /// The outermost groups (one on every machine seen so far).
    pub groups: Vec<CpuGroup>,
}

impl CpuTopology {
    /// Parses the XML (the value of `kern.sched.topology_spec`, or `sysctl -n` of it).
    pub fn parse(xml: &str) -> Result<Self, ParseError> {
        let tokens = tokenize(xml)?;
        let mut r = Reader { tokens, at: 0 };
        let groups = r.groups()?;
        if let Some(t) = r.tokens.get(r.at) {
            return Err(malformed(t.line, "nothing after </groups>", &t.describe()));
        }
        Ok(CpuTopology { groups })
    }

    /// Every group, outermost first.
    pub fn all_groups(&self) -> Vec<&CpuGroup> {
        let mut out = Vec::new();
        for g in &self.groups {
            g.walk(&mut out);
        }
        out
    }

    /// Number of logical CPUs (the CPUs of the outermost groups).
    pub fn logical_cpus(&self) -> usize {
        let mut cpus: Vec<u32> = self.groups.iter().flat_map(|g| g.cpus.clone()).collect();
        cpus.sort_unstable();
        cpus.dedup();
        cpus.len()
    }

    /// The hardware threads of each core that has more than one.
    pub fn smt_groups(&self) -> Vec<&CpuGroup> {
        self.all_groups()
            .into_iter()
            .filter(|g| g.is_smt())
            .collect()
    }

    /// Hardware threads per core: the largest SMT group, 1 without SMT.
    pub fn threads_per_core(&self) -> usize {
        self.smt_groups()
            .iter()
            .map(|g| g.cpus.len())
            .max()
            .unwrap_or(1)
    }

    /// Physical cores: one per SMT group plus one per CPU in no SMT group.
    pub fn cores(&self) -> usize {
        let smt = self.smt_groups();
        let in_smt: usize = smt.iter().map(|g| g.cpus.len()).sum();
        smt.len() + self.logical_cpus().saturating_sub(in_smt)
    }

    /// The NUMA domains the scheduler knows, each with its CPUs.
    pub fn numa_nodes(&self) -> Vec<&CpuGroup> {
        self.all_groups()
            .into_iter()
            .filter(|g| g.is_numa_node())
            .collect()
    }

    /// The other hardware threads of `cpu`'s core (empty without SMT or for an unknown CPU).
    pub fn smt_siblings(&self, cpu: u32) -> Vec<u32> {
        self.smt_groups()
            .into_iter()
            .find(|g| g.cpus.contains(&cpu))
            .map(|g| g.cpus.iter().copied().filter(|&c| c != cpu).collect())
            .unwrap_or_default()
    }
}

fn malformed(line: usize, expected: &'static str, found: &str) -> ParseError {
    ParseError::Malformed {
        command: Command::TopologySpec,
        line,
        expected,
        found: shown(found),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Open {
        name: String,
        attrs: Vec<(String, String)>,
    },
    Close(String),
    Text(String),
}

#[derive(Debug, Clone)]
struct Token {
    kind: Kind,
    line: usize,
}

impl Token {
    fn describe(&self) -> String {
        match &self.kind {
            Kind::Open { name, .. } => format!("<{name}>"),
            Kind::Close(name) => format!("</{name}>"),
            Kind::Text(t) => t.clone(),
        }
    }
}

/// Splits the XML into tags and non-blank text, with the line each starts on.
fn tokenize(xml: &str) -> Result<Vec<Token>, ParseError> {
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut rest = xml;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('<') {
            let Some(end) = after.find('>') else {
                return Err(ParseError::Truncated {
                    command: Command::TopologySpec,
                    line,
                    what: "a tag".into(),
                });
            };
            let inner = &after[..end];
            tokens.push(Token {
                kind: tag(inner, line)?,
                line,
            });
            line += inner.matches('\n').count();
            rest = &after[end + 1..];
        } else {
            let end = rest.find('<').unwrap_or(rest.len());
            let text = &rest[..end];
            if !text.trim().is_empty() {
                let lead = &text[..text.len() - text.trim_start().len()];
                tokens.push(Token {
                    kind: Kind::Text(text.trim().to_string()),
                    line: line + lead.matches('\n').count(),
                });
            }
            line += text.matches('\n').count();
            rest = &rest[end..];
        }
    }
    Ok(tokens)
}

/// Reads `name attr="v" …` or `/name` between `<` and `>`.
fn tag(inner: &str, line: usize) -> Result<Kind, ParseError> {
    if let Some(name) = inner.strip_prefix('/') {
        return Ok(Kind::Close(name.trim().to_string()));
    }
    let mut parts = inner.trim().splitn(2, char::is_whitespace);
    let name = parts.next().unwrap_or("").to_string();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err(malformed(line, "a tag name", inner));
    }
    let mut attrs = Vec::new();
    let mut rest = parts.next().unwrap_or("").trim();
    while !rest.is_empty() {
        let Some((key, after)) = rest.split_once("=\"") else {
            return Err(malformed(line, "attribute=\"value\"", inner));
        };
        let Some((value, after)) = after.split_once('"') else {
            return Err(malformed(line, "a closing quote", inner));
        };
        attrs.push((key.trim().to_string(), value.to_string()));
        rest = after.trim_start();
    }
    Ok(Kind::Open { name, attrs })
}

/// Deeper nesting than any machine has (package, cache, core: 4 levels at most) is refused
/// before the recursion could exhaust the stack on hostile input.
const MAX_DEPTH: usize = 16;

struct Reader {
    tokens: Vec<Token>,
    at: usize,
}

impl Reader {
    fn next(&mut self, inside: &str, opened: usize) -> Result<Token, ParseError> {
        let t = self
            .tokens
            .get(self.at)
            .cloned()
            .ok_or_else(|| ParseError::Truncated {
                command: Command::TopologySpec,
                line: opened,
                what: format!("<{inside}>"),
            })?;
        self.at += 1;
        Ok(t)
    }

    fn groups(&mut self) -> Result<Vec<CpuGroup>, ParseError> {
        let first = self.next("groups", 1)?;
        if !matches!(&first.kind, Kind::Open { name, .. } if name == "groups") {
            return Err(malformed(first.line, "<groups>", &first.describe()));
        }
        self.group_list("groups", first.line, 0)
    }

    /// Groups up to the closing `</closing>`.
    fn group_list(
        &mut self,
        closing: &str,
        opened: usize,
        depth: usize,
    ) -> Result<Vec<CpuGroup>, ParseError> {
        if depth >= MAX_DEPTH {
            return Err(malformed(opened, "at most 16 nested groups", closing));
        }
        let mut groups = Vec::new();
        loop {
            let t = self.next(closing, opened)?;
            match &t.kind {
                Kind::Close(name) if name == closing => return Ok(groups),
                Kind::Open { name, attrs } if name == "group" => {
                    groups.push(self.group(attrs, t.line, depth)?);
                }
                _ => {
                    return Err(malformed(
                        t.line,
                        "<group> or the closing tag",
                        &t.describe(),
                    ));
                }
            }
        }
    }

    fn group(
        &mut self,
        attrs: &[(String, String)],
        opened: usize,
        depth: usize,
    ) -> Result<CpuGroup, ParseError> {
        let attr = |key: &str| -> Result<u32, ParseError> {
            let v = attrs
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
                .ok_or_else(|| malformed(opened, "level and cache-level attributes", "<group>"))?;
            number(Command::TopologySpec, opened, key, v).and_then(|n| {
                u32::try_from(n).map_err(|_| ParseError::BadNumber {
                    command: Command::TopologySpec,
                    line: opened,
                    field: key.to_string(),
                    value: v.to_string(),
                })
            })
        };
        let mut group = CpuGroup {
            level: attr("level")?,
            cache_level: attr("cache-level")?,
            cpus: Vec::new(),
            mask: String::new(),
            flags: Vec::new(),
            children: Vec::new(),
        };
        let mut saw_cpu = false;
        loop {
            let t = self.next("group", opened)?;
            match &t.kind {
                Kind::Close(name) if name == "group" => break,
                Kind::Open { name, attrs } if name == "cpu" => {
                    self.cpu(&mut group, attrs, t.line)?;
                    saw_cpu = true;
                }
                Kind::Open { name, .. } if name == "flags" => self.flags(&mut group, t.line)?,
                Kind::Open { name, .. } if name == "children" => {
                    group.children = self.group_list("children", t.line, depth + 1)?;
                }
                _ => {
                    return Err(malformed(
                        t.line,
                        "<cpu>, <flags>, <children> or </group>",
                        &t.describe(),
                    ));
                }
            }
        }
        if !saw_cpu {
            return Err(malformed(opened, "a <cpu> element in the group", "<group>"));
        }
        Ok(group)
    }

    fn cpu(
        &mut self,
        group: &mut CpuGroup,
        attrs: &[(String, String)],
        opened: usize,
    ) -> Result<(), ParseError> {
        let get = |key: &str| {
            attrs
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        let count = match get("count") {
            Some(c) => number(Command::TopologySpec, opened, "count", c)?,
            None => return Err(malformed(opened, "<cpu count=\"N\" …>", "<cpu>")),
        };
        group.mask = get("mask").unwrap_or("").to_string();
        let t = self.next("cpu", opened)?;
        let list = match &t.kind {
            Kind::Text(list) => {
                let close = self.next("cpu", opened)?;
                if close.kind != Kind::Close("cpu".into()) {
                    return Err(malformed(close.line, "</cpu>", &close.describe()));
                }
                list.clone()
            }
            Kind::Close(name) if name == "cpu" => String::new(),
            _ => return Err(malformed(t.line, "a CPU list", &t.describe())),
        };
        for id in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let n = number(Command::TopologySpec, t.line, "cpu id", id)?;
            group
                .cpus
                .push(u32::try_from(n).map_err(|_| ParseError::BadNumber {
                    command: Command::TopologySpec,
                    line: t.line,
                    field: "cpu id".into(),
                    value: id.to_string(),
                })?);
        }
        if group.cpus.len() as u64 != count {
            return Err(ParseError::Inconsistent {
                command: Command::TopologySpec,
                line: opened,
                what: format!(
                    "count=\"{count}\" but the list has {} CPUs",
                    group.cpus.len()
                ),
            });
        }
        Ok(())
    }

    fn flags(&mut self, group: &mut CpuGroup, opened: usize) -> Result<(), ParseError> {
        loop {
            let t = self.next("flags", opened)?;
            match &t.kind {
                Kind::Close(name) if name == "flags" => return Ok(()),
                Kind::Open { name, attrs } if name == "flag" => {
                    let flag = attrs
                        .iter()
                        .find(|(k, _)| k == "name")
                        .map(|(_, v)| v.clone())
                        .ok_or_else(|| malformed(t.line, "<flag name=\"…\">", "<flag>"))?;
                    // The flag's text ("THREAD group") is a description: skip it.
                    loop {
                        let inner = self.next("flag", t.line)?;
                        match inner.kind {
                            Kind::Close(ref n) if n == "flag" => break,
                            Kind::Text(_) => {}
                            _ => return Err(malformed(inner.line, "</flag>", &inner.describe())),
                        }
                    }
                    group.flags.push(flag);
                }
                _ => return Err(malformed(t.line, "<flag> or </flags>", &t.describe())),
            }
        }
    }
}

#[cfg(test)]
mod tests;
