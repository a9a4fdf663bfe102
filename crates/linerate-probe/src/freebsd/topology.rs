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
        self.group_list("groups", first.line)
    }

    /// Groups up to the closing `</closing>`.
    fn group_list(&mut self, closing: &str, opened: usize) -> Result<Vec<CpuGroup>, ParseError> {
        let mut groups = Vec::new();
        loop {
            let t = self.next(closing, opened)?;
            match &t.kind {
                Kind::Close(name) if name == closing => return Ok(groups),
                Kind::Open { name, attrs } if name == "group" => {
                    groups.push(self.group(attrs, t.line)?);
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

    fn group(&mut self, attrs: &[(String, String)], opened: usize) -> Result<CpuGroup, ParseError> {
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
                    group.children = self.group_list("children", t.line)?;
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
mod tests {
    use super::super::SysctlDump;
    use super::*;

    const CPUINFO_172: &str = include_str!(
        "../../testdata/freebsd/pytorch-cpuinfo-172/sysctl-kern-sched-topology_spec.txt"
    );
    const HAPROXY_TRUNCATED: &str = include_str!(
        "../../testdata/freebsd/haproxy-3456-ryzen/sysctl-qn-kern-sched-topology_spec.txt"
    );

    fn cpuinfo_172() -> CpuTopology {
        let dump = SysctlDump::parse(CPUINFO_172).unwrap();
        CpuTopology::parse(dump.get("kern.sched.topology_spec").unwrap()).unwrap()
    }

    #[test]
    fn four_cores_two_threads_each() {
        let t = cpuinfo_172();
        assert_eq!(t.groups.len(), 1);
        let top = &t.groups[0];
        assert_eq!((top.level, top.cache_level), (1, 3));
        assert_eq!(top.cpus, (0..8).collect::<Vec<_>>());
        assert_eq!(top.mask, "ff,0,0,0");
        assert_eq!(top.children.len(), 4);
        assert_eq!(t.logical_cpus(), 8);
        assert_eq!(t.smt_groups().len(), 4);
        assert_eq!(t.threads_per_core(), 2);
        assert_eq!(t.cores(), 4);
        assert_eq!(t.smt_siblings(5), vec![4]);
        assert_eq!(t.smt_siblings(42), Vec::<u32>::new());
        assert!(t.numa_nodes().is_empty());
        assert_eq!(top.children[3].cpus, vec![6, 7]);
        assert_eq!(top.children[3].flags, vec!["THREAD", "SMT"]);
    }

    #[test]
    fn a_cut_document_is_reported_not_half_read() {
        let e = CpuTopology::parse(HAPROXY_TRUNCATED).unwrap_err();
        // The outermost open element when the text stops is the first-level <children>.
        assert!(matches!(e, ParseError::Truncated { .. }), "{e}");
        assert_eq!(e.line(), 4);
        assert_eq!(
            e.to_string(),
            "kern.sched.topology_spec: input ends inside <children> opened on line 4"
        );
    }

    #[test]
    fn flat_topology_without_smt_and_numa_nodes() {
        // psutil issue #2782 quotes this 4-CPU, no-SMT topology (FreeBSD, 2026).
        let flat = "<groups>\n <group level=\"1\" cache-level=\"0\">\n  <cpu count=\"4\" mask=\"f,0,0,0\">0, 1, 2, 3</cpu>\n </group>\n</groups>\n";
        let t = CpuTopology::parse(flat).unwrap();
        assert_eq!(
            (t.logical_cpus(), t.cores(), t.threads_per_core()),
            (4, 4, 1)
        );
        let numa = "<groups><group level=\"1\" cache-level=\"0\"><cpu count=\"4\" mask=\"0xf\">0, 1, 2, 3</cpu><flags></flags><children>\
            <group level=\"2\" cache-level=\"3\"><cpu count=\"2\" mask=\"0x3\">0, 1</cpu><flags><flag name=\"NODE\">NUMA node</flag></flags></group>\
            <group level=\"2\" cache-level=\"3\"><cpu count=\"2\" mask=\"0xc\">2, 3</cpu><flags><flag name=\"NODE\">NUMA node</flag></flags></group>\
            </children></group></groups>";
        let t = CpuTopology::parse(numa).unwrap();
        assert_eq!(t.numa_nodes().len(), 2);
        assert_eq!(t.numa_nodes()[1].cpus, vec![2, 3]);
        assert_eq!(t.cores(), 4);
    }

    #[test]
    fn errors_point_at_the_line() {
        let bad_count = "<groups>\n<group level=\"1\" cache-level=\"0\">\n<cpu count=\"3\" mask=\"f\">0, 1</cpu>\n</group>\n</groups>";
        let e = CpuTopology::parse(bad_count).unwrap_err();
        assert_eq!(
            e.to_string(),
            "kern.sched.topology_spec, line 3: count=\"3\" but the list has 2 CPUs"
        );
        let bad_id = "<groups>\n<group level=\"1\" cache-level=\"0\">\n<cpu count=\"1\" mask=\"f\">\nx</cpu></group></groups>";
        assert_eq!(CpuTopology::parse(bad_id).unwrap_err().line(), 4);
        let stray = "<groups></groups>\n<oops>";
        assert_eq!(CpuTopology::parse(stray).unwrap_err().line(), 2);
        assert!(CpuTopology::parse("").is_err());
        assert!(CpuTopology::parse("<groups").is_err());
        assert!(CpuTopology::parse("<groups><group level=\"x\" cache-level=\"0\">").is_err());
    }
}
