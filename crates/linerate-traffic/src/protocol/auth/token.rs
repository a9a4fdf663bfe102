//! The plaintext of an iperf3 authentication token, `user: U\npwd:  P\nts:   T` (T in Unix
//! seconds), and its parser. The parser reads what the server decrypted from an untrusted
//! client, so it takes any bytes and never panics; it accepts exactly the lines iperf3 writes
//! (trailing NUL bytes and white space after the time are tolerated).

/// What a token carries. The user and password are bytes: iperf3 sends them as given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Credentials<'a> {
    pub user: &'a [u8],
    pub password: &'a [u8],
    /// The client's clock when it made the token, Unix seconds.
    pub ts: i64,
}

const USER: &[u8] = b"user: ";
const PASSWORD: &[u8] = b"pwd:  ";
const TIME: &[u8] = b"ts:   ";

/// The plaintext iperf3 encrypts (its `auth_text_format`).
pub fn text(user: &str, password: &str, ts: i64) -> String {
    format!("user: {user}\npwd:  {password}\nts:   {ts}")
}

/// Splits a decrypted token into its credentials; `None` when it is not one.
pub fn parse(pt: &[u8]) -> Option<Credentials<'_>> {
    let mut lines = pt.splitn(3, |&b| b == b'\n');
    let user = lines.next()?.strip_prefix(USER)?;
    let password = lines.next()?.strip_prefix(PASSWORD)?;
    let ts = lines.next()?.strip_prefix(TIME)?;
    let end = ts
        .iter()
        .rposition(|&b| b != 0 && !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    let ts = &ts[..end];
    // i64's parser takes a leading '+'; iperf3 never writes one.
    if ts.first() == Some(&b'+') {
        return None;
    }
    let ts = std::str::from_utf8(ts).ok()?.parse().ok()?;
    Some(Credentials { user, password, ts })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_text_is_iperf3s_format() {
        assert_eq!(
            text("mario", "rossi", 1_700_000_000),
            "user: mario\npwd:  rossi\nts:   1700000000"
        );
    }

    #[test]
    fn near_misses_are_refused() {
        for bad in [
            &b""[..],
            b"user: u\npwd: p\nts: 1",
            b"user: u\npwd:  p",
            b"user: u\npwd:  p\nts:   ",
            b"user: u\npwd:  p\nts:   +1",
            b"user: u\npwd:  p\nts:   1x",
            b"user: u\npwd:  p\nts:   99999999999999999999",
            b"User: u\npwd:  p\nts:   1",
        ] {
            assert_eq!(parse(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        let c = parse(b"user: u\npwd:  p\nts:   -5\0\0\r\n").expect("trailing NULs and space");
        assert_eq!(c.ts, -5);
    }

    /// A user name or password as a client may send it: anything but a line break.
    fn field() -> impl Strategy<Value = String> {
        "[^\n]{0,40}"
    }

    /// Bytes that are often almost a token: the fixed parts, line breaks, NULs, digits, signs
    /// and arbitrary bytes, in any order.
    fn near_token() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            Just(USER.to_vec()),
            Just(PASSWORD.to_vec()),
            Just(TIME.to_vec()),
            Just(b"\n".to_vec()),
            Just(b"\0".to_vec()),
            "[0-9+ -]{1,6}".prop_map(String::into_bytes),
            proptest::collection::vec(any::<u8>(), 1..8),
        ];
        proptest::collection::vec(piece, 0..12).prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn what_text_writes_parse_reads_back(user in field(), password in field(), ts in any::<i64>()) {
            let t = text(&user, &password, ts);
            let c = parse(t.as_bytes());
            prop_assert_eq!(
                c,
                Some(Credentials { user: user.as_bytes(), password: password.as_bytes(), ts })
            );
        }

        #[test]
        fn any_bytes_parse_without_panic_and_only_as_a_token(pt in near_token()) {
            if let Some(c) = parse(&pt) {
                // Whatever is accepted is the fixed lines around the fields.
                let head = [USER, c.user, b"\n", PASSWORD, c.password, b"\n", TIME].concat();
                prop_assert!(pt.starts_with(&head));
            }
        }

        #[test]
        fn a_token_with_a_flipped_byte_in_a_fixed_part_is_refused(
            ts in any::<i64>(),
            at in prop::sample::select((0..6).chain(11..18).chain(23..30).collect::<Vec<usize>>()),
            flip in 1u8..=255,
        ) {
            // "user: " is bytes 0..6, "\npwd:  " 11..18 and "\nts:   " 23..30 around mario/rossi.
            let mut bad = text("mario", "rossi", ts).into_bytes();
            bad[at] ^= flip;
            prop_assert_eq!(parse(&bad), None);
        }
    }
}
