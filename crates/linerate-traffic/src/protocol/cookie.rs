//! The 37-byte session cookie: 36 characters from `a-z2-7` and a NUL.

use std::fmt;

/// Length of the cookie on the wire, NUL included.
pub const COOKIE_LEN: usize = 37;
const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// A test's cookie. Only well-formed cookies can be built.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cookie([u8; COOKIE_LEN]);

impl Cookie {
    /// A fresh random cookie.
    pub fn random() -> Cookie {
        let mut bytes = [0u8; COOKIE_LEN];
        let mut seed = random_seed();
        for b in bytes.iter_mut().take(COOKIE_LEN - 1) {
            // xorshift64*: enough to keep concurrent tests apart; not a secret.
            seed ^= seed >> 12;
            seed ^= seed << 25;
            seed ^= seed >> 27;
            let r = seed.wrapping_mul(0x2545_F491_4F6C_DD1D);
            *b = ALPHABET[(r >> 59) as usize];
        }
        Cookie(bytes)
    }

    /// Parses wire bytes; `None` unless they are 36 alphabet characters and a NUL.
    pub fn parse(bytes: &[u8]) -> Option<Cookie> {
        if bytes.len() != COOKIE_LEN || bytes[COOKIE_LEN - 1] != 0 {
            return None;
        }
        if !bytes[..COOKIE_LEN - 1].iter().all(|b| ALPHABET.contains(b)) {
            return None;
        }
        let mut out = [0u8; COOKIE_LEN];
        out.copy_from_slice(bytes);
        Some(Cookie(out))
    }

    /// The wire bytes.
    pub fn as_bytes(&self) -> &[u8; COOKIE_LEN] {
        &self.0
    }

    /// The 36 characters, without the NUL.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0[..COOKIE_LEN - 1]).unwrap_or("")
    }
}

impl fmt::Debug for Cookie {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Cookie({})", self.as_str())
    }
}

impl fmt::Display for Cookie {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

fn random_seed() -> u64 {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    h.finish() | 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_cookies_parse_and_differ() {
        let a = Cookie::random();
        let b = Cookie::random();
        assert_ne!(a, b);
        assert_eq!(Cookie::parse(a.as_bytes()), Some(a));
        assert_eq!(a.as_str().len(), 36);
    }

    #[test]
    fn malformed_cookies_are_refused() {
        assert_eq!(
            Cookie::parse(b"GET / HTTP/1.1\r\nHost: x\r\n\r\nxxxxxxxxx\0"),
            None
        );
        let mut ok = *Cookie::random().as_bytes();
        ok[36] = b'a';
        assert_eq!(Cookie::parse(&ok), None);
        assert_eq!(Cookie::parse(&ok[..10]), None);
    }

    proptest::proptest! {
        /// Arbitrary bytes: a cookie exactly when they are 36 alphabet characters and a NUL,
        /// and then it gives back the same bytes; never a panic.
        #[test]
        fn arbitrary_cookie_bytes(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
        ) {
            let well_formed = bytes.len() == COOKIE_LEN
                && bytes[COOKIE_LEN - 1] == 0
                && bytes[..COOKIE_LEN - 1].iter().all(|b| ALPHABET.contains(b));
            match Cookie::parse(&bytes) {
                Some(c) => {
                    proptest::prop_assert!(well_formed);
                    proptest::prop_assert_eq!(&c.as_bytes()[..], &bytes[..]);
                    proptest::prop_assert_eq!(c.as_str().len(), COOKIE_LEN - 1);
                }
                None => proptest::prop_assert!(!well_formed),
            }
        }

        /// Cookies drawn from the alphabet always parse (random bytes rarely reach this case).
        #[test]
        fn alphabet_cookies_parse(idx in proptest::collection::vec(0usize..32, COOKIE_LEN - 1)) {
            let mut bytes: Vec<u8> = idx.iter().map(|&i| ALPHABET[i]).collect();
            bytes.push(0);
            proptest::prop_assert!(Cookie::parse(&bytes).is_some());
        }
    }
}
