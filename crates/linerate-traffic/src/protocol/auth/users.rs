//! iperf3's authorized-users file (`user,HEX` lines, HEX the SHA-256 of `{user}password`, `#`
//! starting a comment) and the check of a user's password against it, in constant time: every
//! entry is compared, name and hash alike, with OpenSSL's `CRYPTO_memcmp`, so how long a check
//! takes says nothing about which user exists or how much of a hash matched.

use openssl::memcmp;
use sha2::{Digest, Sha256};

/// The hex SHA-256 of `{user}password`, as the authorized-users file stores it.
pub fn user_hash(user: &str, password: &str) -> String {
    salted(user.as_bytes(), password.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// SHA-256 of `{user}password`.
fn salted(user: &[u8], password: &[u8]) -> [u8; 32] {
    Sha256::new()
        .chain_update(b"{")
        .chain_update(user)
        .chain_update(b"}")
        .chain_update(password)
        .finalize()
        .into()
}

/// One line of the file. The name is kept as its SHA-256 so that names of any length compare
/// in the same time (`CRYPTO_memcmp` compares equal lengths only).
struct Entry {
    name: [u8; 32],
    hash: [u8; 32],
}

/// The users allowed to test.
pub struct Users(Vec<Entry>);

impl Users {
    /// Reads the file's text; blank lines and `#` comments are skipped. Errors: (line, why).
    pub fn parse(text: &str) -> Result<Users, (usize, String)> {
        let mut users = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((user, hex)) = line.split_once(',') else {
                return Err((i + 1, format!("{line:?}: expected user,sha256hex")));
            };
            let hex = hex.trim();
            let Some(hash) = from_hex(hex) else {
                return Err((
                    i + 1,
                    format!("{hex:?}: expected 64 hex digits (SHA-256 of {{user}}password)"),
                ));
            };
            let name = Sha256::digest(user.trim().as_bytes()).into();
            users.push(Entry { name, hash });
        }
        Ok(Users(users))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether `user` with `password` is in the file. All entries are compared, none is
    /// skipped on a match or a mismatch.
    pub fn admits(&self, user: &[u8], password: &[u8]) -> bool {
        let name: [u8; 32] = Sha256::digest(user).into();
        let hash = salted(user, password);
        self.0.iter().fold(false, |found, e| {
            // `&` and `|` rather than `&&` and `||`: no short cut.
            found | (memcmp::eq(&e.name, &name) & memcmp::eq(&e.hash, &hash))
        })
    }
}

/// 64 hex digits (either case) as 32 bytes.
fn from_hex(hex: &str) -> Option<[u8; 32]> {
    let digits = hex.as_bytes();
    if digits.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (o, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        let pair = std::str::from_utf8(pair).ok()?;
        if !pair.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        *o = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARIO: &str = "bf7a49a846d44b454a5d11e7acfaf13d138bbe0b7483aa3e050879700572709b";

    #[test]
    fn the_users_file_hash_is_sha256_of_braced_user_and_password() {
        // sha256("{mario}rossi"), as iperf3's documentation shows for user mario.
        assert_eq!(user_hash("mario", "rossi"), MARIO);
    }

    #[test]
    fn only_the_right_user_with_the_right_password_is_admitted() {
        let text = format!(
            "# users\n\nluigi,{}\n mario , {} \n",
            user_hash("luigi", "verdi"),
            MARIO.to_ascii_uppercase()
        );
        let users = Users::parse(&text).expect("valid");
        assert_eq!(users.len(), 2);
        assert!(users.admits(b"mario", b"rossi"));
        assert!(users.admits(b"luigi", b"verdi"));
        assert!(!users.admits(b"mario", b"verdi"));
        assert!(!users.admits(b"luigi", b"rossi"));
        assert!(!users.admits(b"peach", b"rossi"));
        assert!(!users.admits(b"", b""));
        assert!(!Users::parse("").expect("empty").admits(b"mario", b"rossi"));
    }

    #[test]
    fn bad_users_lines_name_the_line() {
        let e = Users::parse("# c\n\nmario,abc\n")
            .err()
            .expect("short hash");
        assert_eq!(e.0, 3);
        assert!(Users::parse("nocomma\n").is_err());
        let not_hex = format!("mario,{}", "g".repeat(64));
        assert!(Users::parse(&not_hex).is_err());
        // 64 bytes but not 64 ASCII digits.
        let wide = format!("mario,{}é", "a".repeat(62));
        assert_eq!(wide.split_once(',').map(|(_, h)| h.len()), Some(64));
        assert!(Users::parse(&wide).is_err());
    }
}
