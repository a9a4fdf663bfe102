//! Stacks folded the `stackcollapse` way (`root;caller;leaf count`), and the top functions
//! (self and total share of the samples) computed from them.

use std::collections::{BTreeMap, HashMap, HashSet};

/// Folded stacks: each distinct stack (root first) and how many samples it got.
#[derive(Debug, Default)]
pub struct Folded {
    stacks: HashMap<String, u64>,
    samples: u64,
}

/// One function of the top list (schema linerate.profile/1).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TopFunction {
    /// The function's frame name.
    pub function: String,
    /// Samples taken in the function itself (it was the leaf).
    pub self_samples: u64,
    /// `self_samples` in percent of all samples.
    pub self_percent: f64,
    /// Samples with the function anywhere on the stack (once per sample).
    pub total_samples: u64,
    /// `total_samples` in percent of all samples.
    pub total_percent: f64,
}

/// A line of folded stacks that does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FoldedError {
    /// The line has no ` COUNT` after its stack.
    #[error("line {line}: not `STACK COUNT`: {text:?}")]
    NoCount {
        /// Line number, from 1.
        line: usize,
        /// The line.
        text: String,
    },
    /// The count is not a number of samples.
    #[error("line {line}: bad count {count:?}")]
    BadCount {
        /// Line number, from 1.
        line: usize,
        /// What stood where the count belongs.
        count: String,
    },
}

/// Frames may not contain the separators of the format.
fn clean(frame: &str) -> String {
    frame
        .chars()
        .map(|c| {
            if c == ';' || c.is_whitespace() {
                '_'
            } else {
                c
            }
        })
        .collect()
}

impl Folded {
    /// Adds one sample whose frames are given innermost first.
    pub fn add(&mut self, frames_leaf_first: &[String]) {
        if frames_leaf_first.is_empty() {
            return;
        }
        let key = frames_leaf_first
            .iter()
            .rev()
            .map(|f| clean(f))
            .collect::<Vec<_>>()
            .join(";");
        *self.stacks.entry(key).or_insert(0) += 1;
        self.samples += 1;
    }

    /// Samples added.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// The lines of the folded format, sorted (so the output is stable).
    pub fn lines(&self) -> Vec<String> {
        let sorted: BTreeMap<&String, &u64> = self.stacks.iter().collect();
        sorted
            .into_iter()
            .map(|(s, n)| format!("{s} {n}"))
            .collect()
    }

    /// The folded format as one text (a line per stack, sorted, newline-terminated).
    pub fn text(&self) -> String {
        let mut text = self.lines().join("\n");
        if !text.is_empty() {
            text.push('\n');
        }
        text
    }

    /// Reads the folded format (`root;…;leaf COUNT` per line; blank lines skipped), as written
    /// by [`Folded::text`] or by other tools' `stackcollapse`.
    pub fn parse(text: &str) -> Result<Folded, FoldedError> {
        let mut f = Folded::default();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let (stack, count) = line.rsplit_once(' ').ok_or_else(|| FoldedError::NoCount {
                line: i + 1,
                text: line.to_owned(),
            })?;
            let n: u64 = count.trim().parse().map_err(|_| FoldedError::BadCount {
                line: i + 1,
                count: count.to_owned(),
            })?;
            f.add_stack(stack, n);
        }
        Ok(f)
    }

    /// Adds `count` samples of a stack already in the folded form (root first).
    pub fn add_stack(&mut self, stack: &str, count: u64) {
        *self.stacks.entry(stack.to_owned()).or_insert(0) += count;
        self.samples += count;
    }

    /// Adds every stack of `other`.
    pub fn merge(&mut self, other: &Folded) {
        for (s, &n) in &other.stacks {
            self.add_stack(s, n);
        }
    }

    /// Each function's self share of the samples (0 to 1).
    pub fn self_shares(&self) -> HashMap<String, f64> {
        let mut own: HashMap<String, f64> = HashMap::new();
        if self.samples == 0 {
            return own;
        }
        for (stack, &count) in &self.stacks {
            let leaf = stack.rsplit(';').next().unwrap_or(stack);
            *own.entry(leaf.to_owned()).or_insert(0.0) += count as f64;
        }
        for v in own.values_mut() {
            *v /= self.samples as f64;
        }
        own
    }

    /// The `n` functions with the most self samples (ties: most total samples, then name).
    /// Total counts a function once per sample, however often it recurs in the stack.
    pub fn top(&self, n: usize) -> Vec<TopFunction> {
        let mut own: HashMap<&str, u64> = HashMap::new();
        let mut total: HashMap<&str, u64> = HashMap::new();
        for (stack, &count) in &self.stacks {
            let frames: Vec<&str> = stack.split(';').collect();
            if let Some(leaf) = frames.last() {
                *own.entry(leaf).or_insert(0) += count;
            }
            let distinct: HashSet<&str> = frames.iter().copied().collect();
            for f in distinct {
                *total.entry(f).or_insert(0) += count;
            }
        }
        let pct = |n: u64| {
            if self.samples == 0 {
                0.0
            } else {
                (n as f64 * 10000.0 / self.samples as f64).round() / 100.0
            }
        };
        let mut list: Vec<TopFunction> = total
            .iter()
            .map(|(&f, &t)| {
                let s = own.get(f).copied().unwrap_or(0);
                TopFunction {
                    function: f.to_owned(),
                    self_samples: s,
                    self_percent: pct(s),
                    total_samples: t,
                    total_percent: pct(t),
                }
            })
            .collect();
        list.sort_by(|a, b| {
            b.self_samples
                .cmp(&a.self_samples)
                .then(b.total_samples.cmp(&a.total_samples))
                .then(a.function.cmp(&b.function))
        });
        list.truncate(n);
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn folds_root_first_and_counts() {
        let mut f = Folded::default();
        f.add(&s(&["leaf", "mid", "main", "prog"]));
        f.add(&s(&["leaf", "mid", "main", "prog"]));
        f.add(&s(&["other", "main", "prog"]));
        f.add(&[]);
        assert_eq!(f.samples(), 3);
        assert_eq!(
            f.lines(),
            vec![
                "prog;main;mid;leaf 2".to_owned(),
                "prog;main;other 1".to_owned()
            ]
        );
    }

    #[test]
    fn text_round_trips_and_merges() {
        let mut f = Folded::default();
        f.add(&s(&["leaf", "main"]));
        f.add(&s(&["other", "main"]));
        f.add(&s(&["other", "main"]));
        let back = Folded::parse(&f.text()).expect("own text parses");
        assert_eq!(back.lines(), f.lines());
        assert_eq!(back.samples(), 3);
        let mut m = Folded::default();
        m.merge(&back);
        m.merge(&back);
        assert_eq!(m.samples(), 6);
        let shares = m.self_shares();
        assert!((shares["other"] - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(
            Folded::parse("a;b 1\na;b x\n")
                .expect_err("bad count")
                .to_string(),
            "line 2: bad count \"x\""
        );
        assert_eq!(
            Folded::parse("nocount\n")
                .expect_err("no count")
                .to_string(),
            "line 1: not `STACK COUNT`: \"nocount\""
        );
        assert_eq!(Folded::parse("\n").expect("empty").samples(), 0);
    }

    #[test]
    fn separators_inside_frames_are_replaced() {
        let mut f = Folded::default();
        f.add(&s(&["a;b c", "my prog"]));
        assert_eq!(f.lines(), vec!["my_prog;a_b_c 1".to_owned()]);
    }

    #[test]
    fn top_has_self_and_total_shares() {
        let mut f = Folded::default();
        for _ in 0..3 {
            f.add(&s(&["leaf", "rec", "rec", "main"]));
        }
        f.add(&s(&["main"]));
        let top = f.top(10);
        assert_eq!(top[0].function, "leaf");
        assert_eq!(top[0].self_percent, 75.0);
        assert_eq!(top[0].total_percent, 75.0);
        let main = top
            .iter()
            .find(|t| t.function == "main")
            .expect("main listed");
        assert_eq!((main.self_samples, main.total_samples), (1, 4));
        assert_eq!((main.self_percent, main.total_percent), (25.0, 100.0));
        // recursion counts once per sample
        let rec = top
            .iter()
            .find(|t| t.function == "rec")
            .expect("rec listed");
        assert_eq!(rec.total_samples, 3);
        assert_eq!(f.top(1).len(), 1);
    }
}
