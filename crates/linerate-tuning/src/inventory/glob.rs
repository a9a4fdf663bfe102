//! Matching keys component by component. An inventory `*` stands for one component (an
//! interface, a device unit); a user's key may itself be a systemd-sysctl glob
//! (`net.ipv4.conf.*.rp_filter`, sysctl.d(5)), whose components use fnmatch's `*`, `?` and
//! `[...]`.

/// Whether a key uses glob characters.
pub(crate) fn is_glob(key: &str) -> bool {
    key.contains(['*', '?', '['])
}

/// Whether the user's key `parts` names the inventory key or pattern `pattern` (same number of
/// components, each equal, or a `*` in the pattern, or a glob in the key that matches).
pub(crate) fn key_matches(parts: &[String], pattern: &[String]) -> bool {
    parts.len() == pattern.len()
        && parts
            .iter()
            .zip(pattern)
            .all(|(k, p)| p == "*" || k == p || (is_glob(k) && fnmatch(k, p)))
}

/// Whether `parts` lies strictly under the subtree `prefix`.
pub(crate) fn under(parts: &[String], prefix: &[String]) -> bool {
    parts.len() > prefix.len() && key_matches(&parts[..prefix.len()], prefix)
}

/// fnmatch(3) without flags, on one component: `*` any run, `?` one character, `[...]` a set
/// (`!` or `^` negates, `a-z` ranges). An unclosed `[` matches itself.
pub(crate) fn fnmatch(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    matches(&p, &t)
}

fn matches(p: &[char], t: &[char]) -> bool {
    match p.first() {
        None => t.is_empty(),
        Some('*') => (0..=t.len()).any(|i| matches(&p[1..], &t[i..])),
        Some('?') => !t.is_empty() && matches(&p[1..], &t[1..]),
        Some('[') => match (class(p), t.first()) {
            (Some((hit, len)), Some(c)) => hit(*c) && matches(&p[len..], &t[1..]),
            (None, Some(c)) => *c == '[' && matches(&p[1..], &t[1..]),
            (_, None) => false,
        },
        Some(c) => t.first() == Some(c) && matches(&p[1..], &t[1..]),
    }
}

/// A `[...]` set at the start of `p`: its test and its length in characters.
fn class(p: &[char]) -> Option<(impl Fn(char) -> bool, usize)> {
    let mut i = 1;
    let negate = matches!(p.get(i), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let start = i;
    // A `]` right after the opening bracket is a member, not the end.
    if p.get(i) == Some(&']') {
        i += 1;
    }
    while p.get(i).is_some_and(|c| *c != ']') {
        i += 1;
    }
    if p.get(i) != Some(&']') {
        return None;
    }
    let members: Vec<char> = p[start..i].to_vec();
    let test = move |c: char| {
        let mut hit = false;
        let mut j = 0;
        while j < members.len() {
            if j + 2 < members.len() && members[j + 1] == '-' {
                hit |= (members[j]..=members[j + 2]).contains(&c);
                j += 3;
            } else {
                hit |= members[j] == c;
                j += 1;
            }
        }
        hit != negate
    };
    Some((test, i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(k: &str) -> Vec<String> {
        k.split('.').map(str::to_string).collect()
    }

    #[test]
    fn fnmatch_like_the_c_library() {
        assert!(fnmatch("*", "eth0"));
        assert!(fnmatch("eth*", "eth0"));
        assert!(!fnmatch("eth*", "lo"));
        assert!(fnmatch("eth?", "eth1"));
        assert!(fnmatch("eth[0-3]", "eth2"));
        assert!(!fnmatch("eth[!0-3]", "eth2"));
        assert!(fnmatch("a[]]b", "a]b"));
        assert!(fnmatch("a[b", "a[b"), "an unclosed bracket is literal");
    }

    #[test]
    fn keys_match_patterns_and_globs() {
        let pat = s("net.ipv4.conf.*.rp_filter");
        assert!(key_matches(&s("net.ipv4.conf.eth0.rp_filter"), &pat));
        assert!(key_matches(&s("net.ipv4.conf.*.rp_filter"), &pat));
        assert!(!key_matches(&s("net.ipv4.conf.eth0.rp_filter.x"), &pat));
        assert!(key_matches(
            &s("net.ipv4.tcp_*mem"),
            &s("net.ipv4.tcp_rmem")
        ));
        assert!(under(
            &s("net.inet.tcp.rack.misc.dnd"),
            &s("net.inet.tcp.rack")
        ));
        assert!(!under(&s("net.inet.tcp.rack"), &s("net.inet.tcp.rack")));
    }
}
