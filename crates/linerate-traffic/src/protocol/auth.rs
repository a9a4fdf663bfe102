//! iperf3's RSA authentication (3.x): the client encrypts `user: U\npwd:  P\nts:   T` with the
//! server's RSA public key (PKCS#1 v1.5 padding, as iperf3 before 3.17), base64-encodes it and
//! sends it as `"authtoken"` in the parameters; the server decrypts it with its private key,
//! checks the timestamp against its clock (within the skew threshold, 10 s by default) and the
//! user against its authorized-users file: lines `user,HEX` where HEX is SHA-256 of
//! `{user}password`, `#` starting a comment. Keys are PEM files (PKCS#1 or PKCS#8 private key,
//! SubjectPublicKeyInfo or PKCS#1 public key), as `openssl genrsa`/`openssl rsa -pubout` write.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rsa::pkcs1::{DecodeRsaPrivateKey, DecodeRsaPublicKey};
use rsa::pkcs8::{DecodePrivateKey, DecodePublicKey};
use rsa::{Pkcs1v15Encrypt, RsaPrivateKey, RsaPublicKey};
use sha2::{Digest, Sha256};

/// iperf3's default time-skew threshold, in seconds.
pub const DEFAULT_SKEW_SECS: u64 = 10;

/// The longest token accepted (base64 of a 16384-bit RSA block is under 3 KB).
const MAX_TOKEN_LEN: usize = 4096;

/// The hex SHA-256 of `{user}password`, as the authorized-users file stores it.
pub fn user_hash(user: &str, password: &str) -> String {
    let d = Sha256::digest(format!("{{{user}}}{password}").as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The plaintext of a token.
fn token_text(user: &str, password: &str, ts: i64) -> String {
    format!("user: {user}\npwd:  {password}\nts:   {ts}")
}

/// Splits a token's plaintext into user, password and timestamp.
fn parse_token_text(s: &str) -> Option<(&str, &str, i64)> {
    let mut lines = s.split('\n');
    let user = lines.next()?.strip_prefix("user: ")?;
    let pwd = lines.next()?.strip_prefix("pwd:  ")?;
    let ts = lines.next()?.strip_prefix("ts:   ")?;
    let ts = ts.trim_end_matches('\0').trim().parse().ok()?;
    Some((user, pwd, ts))
}

fn read(path: &Path, what: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{what} {}: {e}", path.display()))
}

/// Encrypts the credentials of `user` for the server whose public key is in `key_path`; the
/// base64 token iperf3 sends as `"authtoken"`.
pub fn client_token(
    key_path: &Path,
    user: &str,
    password: &str,
    ts: i64,
) -> Result<String, String> {
    let pem = read(key_path, "reading the RSA public key")?;
    let key = RsaPublicKey::from_public_key_pem(&pem)
        .or_else(|_| RsaPublicKey::from_pkcs1_pem(&pem))
        .map_err(|e| {
            format!(
                "{}: not a PEM RSA public key ({e}); make one with `openssl rsa -in private.pem \
                 -pubout`",
                key_path.display()
            )
        })?;
    let ct = key
        .encrypt(
            &mut rsa::rand_core::OsRng,
            Pkcs1v15Encrypt,
            token_text(user, password, ts).as_bytes(),
        )
        .map_err(|e| {
            format!(
                "encrypting the credentials with {}: {e}",
                key_path.display()
            )
        })?;
    Ok(STANDARD.encode(ct))
}

/// The server side: its private key, the authorized users and the skew threshold.
pub struct Authorizer {
    key: RsaPrivateKey,
    users: HashMap<String, String>,
    skew: u64,
}

impl fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the key.
        f.debug_struct("Authorizer")
            .field("users", &self.users.len())
            .field("skew", &self.skew)
            .finish_non_exhaustive()
    }
}

impl Authorizer {
    /// Loads the private key and the users file; errors name the file (and line).
    pub fn load(key_path: &Path, users_path: &Path, skew: u64) -> Result<Authorizer, String> {
        let pem = read(key_path, "reading the RSA private key")?;
        let key = RsaPrivateKey::from_pkcs8_pem(&pem)
            .or_else(|_| RsaPrivateKey::from_pkcs1_pem(&pem))
            .map_err(|e| {
                format!(
                    "{}: not a PEM RSA private key ({e}); make one with `openssl genrsa -out \
                     private.pem 2048`",
                    key_path.display()
                )
            })?;
        let text = read(users_path, "reading the authorized users")?;
        let users = parse_users(&text)
            .map_err(|(line, why)| format!("{}:{line}: {why}", users_path.display()))?;
        Ok(Authorizer { key, users, skew })
    }

    /// Checks a token at time `now` (Unix seconds): the user's name, or why it is refused.
    pub fn check(&self, token: &str, now: i64) -> Result<String, String> {
        if token.len() > MAX_TOKEN_LEN {
            return Err(format!("a {}-byte token (too long)", token.len()));
        }
        let ct = STANDARD
            .decode(token.trim())
            .map_err(|_| "a token that is not base64".to_owned())?;
        let pt = self
            .key
            .decrypt(Pkcs1v15Encrypt, &ct)
            .map_err(|_| "a token this server's key cannot decrypt".to_owned())?;
        let text = String::from_utf8_lossy(&pt);
        let (user, pwd, ts) =
            parse_token_text(&text).ok_or_else(|| "a token in an unknown format".to_owned())?;
        if now.abs_diff(ts) > self.skew {
            return Err(format!(
                "user {user:?}: the token's time is {} s from the server's (more than the {} s \
                 skew threshold)",
                now.abs_diff(ts),
                self.skew
            ));
        }
        match self.users.get(user) {
            Some(h) if *h == user_hash(user, pwd) => Ok(user.to_owned()),
            Some(_) => Err(format!("user {user:?}: wrong password")),
            None => Err(format!("user {user:?}: not in the authorized users")),
        }
    }
}

/// `user,HEX` lines; `#` comments and blank lines skipped. Errors: (line, why).
fn parse_users(text: &str) -> Result<HashMap<String, String>, (usize, String)> {
    let mut users = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((user, hash)) = line.split_once(',') else {
            return Err((i + 1, format!("{line:?}: expected user,sha256hex")));
        };
        let hash = hash.trim().to_ascii_lowercase();
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err((
                i + 1,
                format!("{hash:?}: expected 64 hex digits (SHA-256 of {{user}}password)"),
            ));
        }
        users.insert(user.trim().to_owned(), hash);
    }
    Ok(users)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_users_file_hash_is_sha256_of_braced_user_and_password() {
        // sha256("{mario}rossi"), as iperf3's documentation shows for user mario.
        assert_eq!(
            user_hash("mario", "rossi"),
            "bf7a49a846d44b454a5d11e7acfaf13d138bbe0b7483aa3e050879700572709b"
        );
    }

    #[test]
    fn token_text_round_trips() {
        let t = token_text("u", "p w", 1_700_000_000);
        assert_eq!(parse_token_text(&t), Some(("u", "p w", 1_700_000_000)));
        assert_eq!(parse_token_text("user: u\npwd: p\nts: 1"), None);
    }

    #[test]
    fn bad_users_lines_name_the_line() {
        let e = parse_users("# c\n\nmario,abc\n").expect_err("short hash");
        assert_eq!(e.0, 3);
        assert!(parse_users("nocomma\n").is_err());
    }
}
