//! Inside every crate of the workspace, modules depend on each other without cycles (issue 13,
//! item 7): a reader can learn a crate bottom-up, and a change low down cannot need a change
//! high up.
//!
//! The check reads the sources, not the compiler's view: every `crate::m…` path (also inside
//! `use crate::{a, b::c}` groups) and every `super::` path that climbs to the crate root is an
//! edge from the file's top-level module to `m`. A top-level module is `m.rs` with everything
//! under `m/`; edges inside one are not counted (a parent and its children are one unit), nor
//! are edges to the crate root (`lib.rs` only declares and re-exports), comment lines or the
//! `#[cfg(test)] mod tests` block at the end of a file (or its own `tests.rs`).
//!
//! `cargo test -p linerate --test module_dag -- --nocapture` prints the edges of every crate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A dependency: `from` uses `to`, first seen at `place` (file:line).
type Edges = BTreeMap<(String, String), String>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        panic!("cannot read {}", dir.display());
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src/a/b.rs` → `["a", "b"]`; `src/lib.rs` → `[]`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts == ["lib"] || parts == ["main"] {
        Vec::new()
    } else {
        parts
    }
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first identifiers of the items of a `{a, b::c, d::{e}}` group that starts `s`.
fn group_heads(s: &str) -> Vec<&str> {
    let mut heads = Vec::new();
    let mut depth = 0usize;
    let mut item_start = true;
    for (i, c) in s.char_indices() {
        match c {
            '{' => {
                depth += 1;
                if depth == 1 {
                    item_start = true;
                    continue;
                }
            }
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => item_start = true,
            c if depth == 1 && item_start && !c.is_whitespace() => {
                heads.push(ident_at(&s[i..]));
                item_start = false;
            }
            _ => {}
        }
    }
    heads
}

/// The code of a file that counts: comment lines and the trailing test module left out.
fn code(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim();
        if t == "#[cfg(test)]"
            && lines[i + 1..]
                .iter()
                .find(|l| !l.trim().is_empty())
                .is_some_and(|l| l.trim_start().starts_with("mod tests"))
        {
            break;
        }
        if !t.starts_with("//") {
            out.push((i + 1, lines[i].to_owned()));
        }
        i += 1;
    }
    out
}

/// The top-level modules `text` (the file of module `path`) refers to.
fn references(path: &[String], text: &str) -> Vec<(usize, String)> {
    // Joined so that `use crate::{` groups spanning lines are seen whole; line numbers come
    // from the position.
    let lines = code(text);
    let joined: String = lines.iter().map(|(_, l)| format!("{l}\n")).collect();
    let line_of = |pos: usize| {
        let n = joined[..pos].matches('\n').count();
        lines.get(n).map_or(0, |(no, _)| *no)
    };
    let mut out = Vec::new();
    let bytes = joined.as_bytes();
    let word_boundary = |pos: usize| {
        pos == 0 || !(bytes[pos - 1].is_ascii_alphanumeric() || bytes[pos - 1] == b'_')
    };
    let mut push_after = |rest: &str, pos: usize| {
        if let Some(group) = rest.strip_prefix('{') {
            for head in group_heads(&format!("{{{group}")) {
                out.push((line_of(pos), head.to_owned()));
            }
        } else {
            out.push((line_of(pos), ident_at(rest).to_owned()));
        }
    };
    for (pos, _) in joined.match_indices("crate::") {
        if word_boundary(pos) {
            push_after(&joined[pos + "crate::".len()..], pos);
        }
    }
    for (pos, _) in joined.match_indices("super::") {
        // Only the first `super::` of a chain, counted from there.
        if !word_boundary(pos) || joined[..pos].ends_with("super::") {
            continue;
        }
        let mut rest = &joined[pos..];
        let mut depth = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            depth += 1;
            rest = r;
        }
        // Inside `a/b.rs` (path [a, b]) `super` is `a`; inside `a.rs` it is the crate root.
        if depth == path.len() {
            push_after(rest, pos);
        }
    }
    out
}

fn edges(src: &Path) -> (BTreeSet<String>, Edges) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|f| module_path(src, f).first().cloned())
        .collect();
    let mut edges = Edges::new();
    for file in &files {
        let path = module_path(src, file);
        let Some(from) = path.first() else { continue };
        // A `tests.rs` (or `tests/`) inside src is a `#[cfg(test)] mod tests` moved to its
        // own file: test code may reach anywhere, as the block at a file's end may.
        if path.iter().skip(1).any(|p| p == "tests") {
            continue;
        }
        let text = std::fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        for (line, to) in references(&path, &text) {
            if &to != from && modules.contains(&to) {
                let place = format!(
                    "{}:{line}",
                    file.strip_prefix(src).unwrap_or(file).display()
                );
                edges.entry((from.clone(), to)).or_insert(place);
            }
        }
    }
    (modules, edges)
}

/// Tarjan's strongly connected components with more than one module: the cycles.
fn cycles(modules: &BTreeSet<String>, edges: &Edges) -> Vec<Vec<String>> {
    struct State<'a> {
        next: usize,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(v: &'a str, edges: &'a Edges, s: &mut State<'a>) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        for (from, to) in edges.keys() {
            if from != v {
                continue;
            }
            let w = to.as_str();
            if !s.index.contains_key(w) {
                visit(w, edges, s);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        next: 0,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for m in modules {
        if !s.index.contains_key(m.as_str()) {
            visit(m, edges, &mut s);
        }
    }
    s.out
}

/// `crates/*/src` of the workspace, by crate name.
fn crate_sources() -> Vec<(String, PathBuf)> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("crates/ is the parent of crates/linerate")
        .to_path_buf();
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(&crates)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", crates.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("Cargo.toml").is_file() && p.join("src").is_dir())
        .map(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            (name.unwrap_or_default(), p.join("src"))
        })
        .collect();
    found.sort();
    found
}

#[test]
fn every_crates_modules_form_a_dag() {
    let crates = crate_sources();
    assert!(crates.len() >= 10, "found only {crates:?}");
    let mut problems = Vec::new();
    for (name, src) in &crates {
        let (modules, edges) = edges(src);
        for ((from, to), place) in &edges {
            println!("{name}: {from} -> {to}   ({place})");
        }
        for c in cycles(&modules, &edges) {
            let inner: Vec<String> = edges
                .iter()
                .filter(|((f, t), _)| c.contains(f) && c.contains(t))
                .map(|((f, t), p)| format!("  {f} -> {t} ({p})"))
                .collect();
            problems.push(format!(
                "{name}: {{{}}}:\n{}",
                c.join(", "),
                inner.join("\n")
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "module cycles:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_scanner_sees_groups_and_super_paths() {
    let text = "use crate::{config::X,\n    stream::{A, B}, pps};\n// crate::ignored\nfn f() { super::modes::run(); }\n";
    let refs: Vec<String> = references(&["client".to_owned()], text)
        .into_iter()
        .map(|(_, m)| m)
        .collect();
    assert_eq!(refs, ["config", "stream", "pps", "modes"]);
    // From `a/b.rs`, `super::` is `a` itself: no edge.
    let refs = references(&["a".to_owned(), "b".to_owned()], "use super::X;");
    assert!(refs.is_empty(), "{refs:?}");
    let refs = references(&["a".to_owned(), "b".to_owned()], "use super::super::c::X;");
    assert_eq!(refs.len(), 1);
}
