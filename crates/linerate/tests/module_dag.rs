//! Inside every crate of the workspace (each `crates/*/src`, found on disk, so a new crate is
//! covered without editing this file), modules depend on each other without cycles (issue 13,
//! item 7; issue 29): a reader can learn a crate bottom-up, and a change low down cannot need a
//! change high up.
//!
//! The check reads the sources, not the compiler's view: every `crate::a::b…` path (also inside
//! `use crate::{a, b::{c, d}}` groups) and every `super::` path is resolved to the module it
//! names. Siblings are compared at every level: an edge `x -> y` under parent `p` is a file of
//! `p::x` (`p/x.rs` or anything under `p/x/`) naming something in `p::y`. A module and its
//! own descendants are one unit (edges between them are not counted), nor are edges to a
//! module's parent (`lib.rs`/`main.rs` and `a.rs` declare and re-export), comment lines or the
//! `#[cfg(test)] mod tests` block at the end of a file (or its own `tests.rs`). Then the
//! siblings of each parent must form a DAG.
//!
//! A second test holds each crate's `linerate-*` dependencies to what `crates/README.md` allows.
//!
//! `cargo test -p linerate --test module_dag -- --nocapture` prints the edges of every crate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A dependency between two siblings: `from` uses `to`, first seen at `place` (file:line).
type Edges = BTreeMap<(String, String), String>;

/// Module path of a parent (`""` for the crate root, `cmd::lab`) → the edges among its
/// children.
type Levels = BTreeMap<String, Edges>;

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

/// The paths a `{a, b::c, d::{e, f}}` group that starts `s` names, each as its segments
/// (`self` and `*` stop a path: they name the prefix itself).
fn group_paths(s: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut item = 1usize;
    for (i, c) in s.char_indices() {
        match c {
            '{' => {
                depth += 1;
                if depth == 1 {
                    item = i + 1;
                }
            }
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    out.extend(segments(&s[item..i]));
                    break;
                }
            }
            ',' if depth == 1 => {
                out.extend(segments(&s[item..i]));
                item = i + 1;
            }
            _ => {}
        }
    }
    out
}

/// The paths `a::b::{c, d}` at the start of `s` names, as segments.
fn segments(s: &str) -> Vec<Vec<String>> {
    let mut prefix = Vec::new();
    let mut rest = s.trim_start();
    loop {
        if rest.starts_with('{') {
            return group_paths(rest)
                .into_iter()
                .map(|tail| prefix.iter().cloned().chain(tail).collect())
                .collect();
        }
        // A raw identifier (`r#gen`) names the module `gen`.
        let raw = if rest.starts_with("r#") { 2 } else { 0 };
        let id = ident_at(&rest[raw..]);
        if id.is_empty() || id == "self" {
            return vec![prefix];
        }
        prefix.push(id.to_owned());
        match rest[raw + id.len()..].trim_start().strip_prefix("::") {
            Some(r) => rest = r.trim_start(),
            None => return vec![prefix],
        }
    }
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

/// The paths `text` (the file of module `path`) names inside the crate, each resolved from
/// the crate root, with the line where it is named.
fn references(path: &[String], text: &str) -> Vec<(usize, Vec<String>)> {
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
    let mut push = |base: &[String], rest: &str, pos: usize| {
        for tail in segments(rest) {
            let full: Vec<String> = base.iter().cloned().chain(tail).collect();
            out.push((line_of(pos), full));
        }
    };
    for (pos, _) in joined.match_indices("crate::") {
        if word_boundary(pos) && !joined[..pos].ends_with('$') {
            push(&[], &joined[pos + "crate::".len()..], pos);
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
        if let Some(base) = path.len().checked_sub(depth) {
            push(&path[..base], rest, pos);
        }
    }
    out
}

/// The sibling edge a reference from module `from` to path `to` makes, if any: under their
/// deepest common parent, from `from`'s child there to `to`'s, when `to`'s is a module.
fn sibling_edge(
    from: &[String],
    to: &[String],
    modules: &BTreeSet<Vec<String>>,
) -> Option<(String, String, String)> {
    let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
    let (a, b) = (from.get(common)?, to.get(common)?);
    let mut target = to[..common].to_vec();
    target.push(b.clone());
    modules
        .contains(&target)
        .then(|| (from[..common].join("::"), a.clone(), b.clone()))
}

fn edges(src: &Path) -> (BTreeMap<String, BTreeSet<String>>, Levels) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    // Every module and each of its ancestors (`a/b/c.rs` declares `a`, `a::b`, `a::b::c`).
    let mut modules = BTreeSet::new();
    for f in &files {
        let path = module_path(src, f);
        for n in 1..=path.len() {
            modules.insert(path[..n].to_vec());
        }
    }
    let mut children: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for m in &modules {
        if let Some((last, parent)) = m.split_last() {
            children
                .entry(parent.join("::"))
                .or_default()
                .insert(last.clone());
        }
    }
    let mut levels = Levels::new();
    for file in &files {
        let path = module_path(src, file);
        // A `tests.rs` (or `tests/`) inside src is a `#[cfg(test)] mod tests` moved to its
        // own file: test code may reach anywhere, as the block at a file's end may.
        if path.is_empty() || path.iter().skip(1).any(|p| p == "tests") {
            continue;
        }
        let text = std::fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        for (line, to) in references(&path, &text) {
            if let Some((parent, a, b)) = sibling_edge(&path, &to, &modules) {
                let place = format!(
                    "{}:{line}",
                    file.strip_prefix(src).unwrap_or(file).display()
                );
                levels
                    .entry(parent)
                    .or_default()
                    .entry((a, b))
                    .or_insert(place);
            }
        }
    }
    (children, levels)
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

/// The cycles among the siblings of every parent module of the crate at `src`, each said
/// with its edges, after printing every edge.
fn crate_cycles(name: &str, src: &Path) -> Vec<String> {
    let (children, levels) = edges(src);
    let mut problems = Vec::new();
    for (parent, edges) in &levels {
        let under = if parent.is_empty() {
            String::new()
        } else {
            format!("{parent}: ")
        };
        for ((from, to), place) in edges {
            println!("{name}: {under}{from} -> {to}   ({place})");
        }
        let siblings = children.get(parent).cloned().unwrap_or_default();
        for c in cycles(&siblings, edges) {
            let inner: Vec<String> = edges
                .iter()
                .filter(|((f, t), _)| c.contains(f) && c.contains(t))
                .map(|((f, t), p)| format!("  {f} -> {t} ({p})"))
                .collect();
            problems.push(format!(
                "{name}: {under}{{{}}}:\n{}",
                c.join(", "),
                inner.join("\n")
            ));
        }
    }
    problems
}

/// Cycles being broken on another branch, as `crate: parent: {a, b}`: tolerated until that
/// branch is merged, and an error once they are gone (so the entry is removed then).
const BEING_BROKEN: &[&str] = &[];

#[test]
fn every_crates_modules_form_a_dag() {
    let crates = crate_sources();
    assert!(crates.len() >= 10, "found only {crates:?}");
    let found: Vec<String> = crates
        .iter()
        .flat_map(|(name, src)| crate_cycles(name, src))
        .collect();
    let problems: Vec<&String> = found
        .iter()
        .filter(|p| !BEING_BROKEN.iter().any(|k| p.starts_with(&format!("{k}:"))))
        .collect();
    let gone: Vec<&&str> = BEING_BROKEN
        .iter()
        .filter(|k| !found.iter().any(|p| p.starts_with(&format!("{k}:"))))
        .collect();
    assert!(
        problems.is_empty(),
        "module cycles:\n{}",
        problems
            .iter()
            .map(|p| p.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        gone.is_empty(),
        "these cycles are gone: remove them from BEING_BROKEN: {gone:?}"
    );
}

#[test]
fn the_scanner_sees_groups_and_super_paths() {
    let text = "use crate::{config::X,\n    stream::{A, B}, pps};\n// crate::ignored\nfn f() { super::modes::run(); }\n";
    let refs: Vec<Vec<String>> = references(&["client".to_owned()], text)
        .into_iter()
        .map(|(_, m)| m)
        .collect();
    let path = |p: &str| -> Vec<String> { p.split("::").map(str::to_owned).collect() };
    assert_eq!(
        refs,
        [
            path("config::X"),
            path("stream::A"),
            path("stream::B"),
            path("pps"),
            path("modes::run")
        ]
    );
    // From `a/b.rs`, `super::X` is `a::X`; `super::super::c` is the root's `c`.
    let refs = references(&["a".to_owned(), "b".to_owned()], "use super::X;");
    assert_eq!(refs[0].1, path("a::X"));
    let refs = references(&["a".to_owned(), "b".to_owned()], "use super::super::c::X;");
    assert_eq!(refs[0].1, path("c::X"));
}

/// A cycle between two nested siblings fails the check, and so does one between top-level
/// modules; a child naming its parent or a parent its child does not.
#[test]
fn cycles_fail_at_every_level() {
    let dir = std::env::temp_dir().join(format!("module-dag-{}", std::process::id()));
    let write = |rel: &str, text: &str| {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("create the directory");
        std::fs::write(&p, text).expect("write a source file");
    };
    write("lib.rs", "mod cmd;\nmod out;\n");
    write("cmd.rs", "mod lab;\nuse self::lab::grid::G;\n");
    write("cmd/lab.rs", "mod grid;\nmod render;\n");
    write(
        "cmd/lab/grid.rs",
        "use super::render::show;\nuse super::Args;\n",
    );
    write(
        "cmd/lab/render.rs",
        "use crate::cmd::lab::grid::{Grid, cells};\n",
    );
    write("out.rs", "use crate::cmd::lab::render::show;\n");
    let nested = crate_cycles("demo", &dir);
    write("out.rs", "use crate::cmd::X;\n");
    write("cmd.rs", "use crate::out::print;\n");
    write("cmd/lab/render.rs", "pub fn show() {}\n");
    let top = crate_cycles("demo", &dir);
    write("cmd.rs", "use crate::cmd::lab::grid::G;\n");
    write("out.rs", "pub fn print() {}\n");
    let none = crate_cycles("demo", &dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(nested.len(), 1, "{nested:?}");
    assert!(
        nested[0].starts_with("demo: cmd::lab: {grid, render}"),
        "{nested:?}"
    );
    assert_eq!(top.len(), 1, "{top:?}");
    assert!(top[0].starts_with("demo: {cmd, out}"), "{top:?}");
    assert!(none.is_empty(), "{none:?}");
}

/// The `linerate-*` crates `toml` (a Cargo.toml) lists under `[dependencies]`, short names.
fn workspace_dependencies(toml: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut in_deps = false;
    for line in toml.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line == "[dependencies]" || line.ends_with(".dependencies]");
        } else if in_deps {
            if let Some(rest) = line.strip_prefix("linerate-") {
                out.insert(ident_at(&rest.replace('-', "_")).replace('_', "-"));
            }
        }
    }
    out
}

/// `crates/README.md` says what each crate may depend on; every crate has a row, and its
/// Cargo.toml depends on no workspace crate beyond that row (the binary: any).
#[test]
fn crates_depend_only_on_what_crates_readme_allows() {
    let crates_dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("crates/ is the parent of crates/linerate");
    let readme = std::fs::read_to_string(crates_dir.join("README.md")).expect("crates/README.md");
    let mut allowed: BTreeMap<String, String> = BTreeMap::new();
    for line in readme.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if let [_, name, _, deps, ..] = cells.as_slice() {
            if let Some(name) = name.strip_prefix('`').and_then(|n| n.strip_suffix('`')) {
                allowed.insert(name.to_owned(), (*deps).to_owned());
            }
        }
    }
    let mut problems = Vec::new();
    for (name, src) in crate_sources() {
        let Some(deps) = allowed.get(&name) else {
            problems.push(format!("{name} has no row in crates/README.md"));
            continue;
        };
        if name == "linerate" {
            continue;
        }
        let listed: BTreeSet<&str> = deps
            .split([',', ' ', '('])
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .collect();
        let toml = std::fs::read_to_string(src.with_file_name("Cargo.toml")).expect("Cargo.toml");
        for dep in workspace_dependencies(&toml) {
            if !listed.contains(dep.as_str()) {
                problems.push(format!(
                    "{name} depends on linerate-{dep}, which crates/README.md does not allow (it says: {deps})"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
