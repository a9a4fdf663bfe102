//! How many digits a printed number keeps, and plain-number helpers (thousands separators).

/// How many digits the number of a printed quantity keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Digits {
    /// The exact value, with as many decimals as it needs (`1.234567891 Gbit/s`); what
    /// `Display` prints and what parses back to the same value.
    Exact,
    /// Exactly `n` decimals: `9.40 Gbit/s` (tables whose columns line up).
    Decimals(u8),
    /// At most `n` decimals, trailing zeros dropped: `9.4 Gbit/s`, `1 Gbit/s`, `7.62 Gbit/s`.
    Max(u8),
    /// `n` significant digits, zeros kept, as iperf3 prints (3: `9.41`, `25.8`, `941`,
    /// `0.00`). A number with more integer digits keeps them all (`1023`).
    Significant(u8),
    /// At most `n` significant digits, trailing zeros dropped (4: `67.2`, `118.4`, `1.04`,
    /// `40`).
    MaxSignificant(u8),
}

/// `x` printed with `digits` (no unit). [`Digits::Exact`] prints the shortest text that reads
/// back as the same `f64`.
pub fn number(x: f64, digits: Digits) -> String {
    match digits {
        Digits::Exact => format!("{x}"),
        Digits::Decimals(n) => decimals(x, n),
        Digits::Max(n) => trim_zeros(decimals(x, n)),
        Digits::Significant(n) => significant(x, n),
        Digits::MaxSignificant(n) => trim_zeros(significant(x, n)),
    }
}

fn decimals(x: f64, n: u8) -> String {
    let n = usize::from(n);
    format!("{x:.n$}")
}

/// `n` significant digits: as many decimals as leave `n` digits in all, chosen after rounding
/// so that 9.996 prints `10.0`, not `10.00`.
fn significant(x: f64, n: u8) -> String {
    let n = i32::from(n.max(1));
    for integer_digits in 1..n {
        let text = decimals(x, u8::try_from(n - integer_digits).unwrap_or(0));
        let shown: f64 = text.parse().unwrap_or(x);
        if shown.abs() < 10f64.powi(integer_digits) {
            return text;
        }
    }
    decimals(x, 0)
}

/// Drops trailing zeros after a decimal point, and the point if nothing follows it.
pub(crate) fn trim_zeros(text: String) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// `1488095` → `1,488,095`: an exact count that a reader can still take in.
pub fn grouped(n: u64) -> String {
    group_integer_part(&n.to_string())
}

/// Thousands separators in the integer part of a plain decimal number (`1234.5` →
/// `1,234.5`).
pub(crate) fn group_integer_part(text: &str) -> String {
    let (int, rest) = match text.find('.') {
        Some(dot) => text.split_at(dot),
        None => (text, ""),
    };
    let (sign, digits) = match int.strip_prefix('-') {
        Some(d) => ("-", d),
        None => ("", int),
    };
    let mut out = String::with_capacity(text.len() + digits.len() / 3);
    out.push_str(sign);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out.push_str(rest);
    out
}
