//! Near misses: a key that is a typo of a known key. Only the last component is compared, and
//! only under the same parent, so two real keys that merely look alike elsewhere in the tree are
//! never confused.

/// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions, so `fitler`
/// is one edit from `filter`).
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// The edits a leaf of this length may be away from a known one and still be a typo: none below
/// four characters (too many short names are one edit apart), one up to nine, two beyond.
pub(crate) fn allowed_edits(leaf: &str) -> usize {
    match leaf.chars().count() {
        0..=3 => 0,
        4..=9 => 1,
        _ => 2,
    }
}

/// The distance of `key`'s leaf from `known`'s when both have the same parent (a `*` in the
/// known name matches any component) and the leaves differ by a typo's worth of edits.
pub(crate) fn leaf_near_miss(key: &[String], known: &[String]) -> Option<usize> {
    let (leaf, parent) = key.split_last()?;
    let (kleaf, kparent) = known.split_last()?;
    if parent.len() != kparent.len()
        || !parent.iter().zip(kparent).all(|(a, b)| b == "*" || a == b)
        || leaf == kleaf
        || kleaf == "*"
    {
        return None;
    }
    let d = distance(leaf, kleaf);
    (d >= 1 && d <= allowed_edits(leaf)).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(k: &str) -> Vec<String> {
        k.split('.').map(str::to_string).collect()
    }

    #[test]
    fn distances() {
        assert_eq!(distance("tcp_rmen", "tcp_rmem"), 1);
        assert_eq!(distance("rp_fitler", "rp_filter"), 1);
        assert_eq!(distance("bbbr", "bbr"), 1);
        assert_eq!(distance("", "abc"), 3);
    }

    #[test]
    fn only_leaves_under_the_same_parent_are_near() {
        assert_eq!(
            leaf_near_miss(
                &s("net.ipv4.tcp_fin_timout"),
                &s("net.ipv4.tcp_fin_timeout")
            ),
            Some(1)
        );
        assert_eq!(
            leaf_near_miss(
                &s("net.ipv4.conf.eth0.rp_fitler"),
                &s("net.ipv4.conf.*.rp_filter")
            ),
            Some(1)
        );
        assert_eq!(
            leaf_near_miss(&s("net.ipv6.tcp_rmem"), &s("net.ipv4.tcp_rmem")),
            None
        );
        // Short leaves are too close to each other to call one a typo of another.
        assert_eq!(
            leaf_near_miss(&s("net.inet.tcp.tsx"), &s("net.inet.tcp.tso")),
            None
        );
    }
}
