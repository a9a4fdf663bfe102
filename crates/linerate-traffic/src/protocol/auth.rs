//! iperf3's RSA authentication (3.x): the client encrypts `user: U\npwd:  P\nts:   T` with the
//! server's RSA public key, base64-encodes it and sends it as `"authtoken"` in the parameters;
//! the server decrypts it with its private key, checks the timestamp against its clock (within
//! the skew threshold, 10 s by default) and the user against its authorized-users file. Keys are
//! PEM files (PKCS#1 or PKCS#8 private key, SubjectPublicKeyInfo or PKCS#1 public key), as
//! `openssl genrsa`/`openssl rsa -pubout` write.
//!
//! The padding is chosen as iperf3 chooses it: RSA-OAEP (SHA-1, MGF1-SHA-1, no label: OpenSSL's
//! defaults, which iperf3 keeps) since 3.17, PKCS#1 v1.5 before and with `--use-pkcs1-padding`.
//! Each side uses its own setting and nothing else: a server tries one padding, never both
//! (iperf3's server does the same), so an OAEP server refuses an iperf3 3.12 client and a
//! PKCS#1 server refuses an iperf3 3.17 client at its default.
//!
//! RSA is OpenSSL's, built from source (the `openssl` crate's `vendored` feature: OpenSSL 3.6).
//! The property this relies on, documented by OpenSSL since 3.2 (`EVP_PKEY_CTX_set_rsa_padding`,
//! "implicit rejection"): PKCS#1 v1.5 decryption does not fail on a bad padding; it returns a
//! pseudo-random message derived deterministically from the key and the ciphertext, in the same
//! time, so neither an error nor its timing tells an attacker whether a chosen ciphertext was
//! well padded (the Bleichenbacher/Marvin attack, RUSTSEC-2023-0071 in the `rsa` crate this
//! replaced). Such a message then fails the token parse like any garbage. OAEP decoding is
//! constant-time in OpenSSL and reports every failure alike. Credentials are compared in
//! constant time too (`users`).

mod token;
mod users;

use std::fmt;
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use openssl::encrypt::{Decrypter, Encrypter};
use openssl::error::ErrorStack;
use openssl::pkey::{Id, PKey, Private, Public};
use openssl::rsa::Rsa;

pub use users::user_hash;

/// iperf3's default time-skew threshold, in seconds.
pub const DEFAULT_SKEW_SECS: u64 = 10;

/// The longest token accepted (base64 of a 16384-bit RSA block is under 3 KB).
const MAX_TOKEN_LEN: usize = 4096;

/// The first OpenSSL release whose PKCS#1 v1.5 decryption rejects bad padding implicitly.
const IMPLICIT_REJECTION_SINCE: i64 = 0x3020_0000;

/// The RSA padding of the token, as iperf3's `--use-pkcs1-padding` chooses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Padding {
    /// RSA-OAEP with SHA-1 and MGF1-SHA-1: iperf3 3.17 and later.
    #[default]
    Oaep,
    /// PKCS#1 v1.5: iperf3 before 3.17, and with `--use-pkcs1-padding`.
    Pkcs1,
}

impl Padding {
    fn openssl(self) -> openssl::rsa::Padding {
        match self {
            Padding::Oaep => openssl::rsa::Padding::PKCS1_OAEP,
            Padding::Pkcs1 => openssl::rsa::Padding::PKCS1,
        }
    }

    /// The bytes one block of a `key_bytes`-byte key carries (RFC 8017: OAEP with SHA-1 takes
    /// 2·20 + 2 bytes, PKCS#1 v1.5 takes 11).
    fn capacity(self, key_bytes: usize) -> usize {
        key_bytes.saturating_sub(match self {
            Padding::Oaep => 42,
            Padding::Pkcs1 => 11,
        })
    }
}

impl fmt::Display for Padding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Padding::Oaep => "OAEP",
            Padding::Pkcs1 => "PKCS#1 v1.5",
        })
    }
}

/// Why keys, users or credentials cannot be used (the server does not start, the client does
/// not connect).
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// A key or users file could not be read.
    #[error("reading {what} {}: {source}", path.display())]
    Read {
        /// Which file it is.
        what: &'static str,
        /// Its path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The private key file is not a PEM private key.
    #[error(
        "{}: not a PEM RSA private key ({source}); make one with `openssl genrsa -out \
         private.pem 2048`", path.display()
    )]
    PrivateKey {
        /// The file.
        path: PathBuf,
        /// OpenSSL's errors.
        source: ErrorStack,
    },
    /// The public key file is not a PEM public key.
    #[error(
        "{}: not a PEM RSA public key ({source}); make one with `openssl rsa -in private.pem \
         -pubout`", path.display()
    )]
    PublicKey {
        /// The file.
        path: PathBuf,
        /// OpenSSL's errors.
        source: ErrorStack,
    },
    /// The key is not an RSA key (an EC or Ed25519 key, say).
    #[error("{}: a {kind:?} key; iperf3's authentication needs an RSA key", path.display())]
    NotRsa {
        /// The file.
        path: PathBuf,
        /// The key's type.
        kind: Id,
    },
    /// A line of the authorized-users file is not `user,SHA256HEX`.
    #[error("{}:{line}: {why}", path.display())]
    Users {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What is wrong with it.
        why: String,
    },
    /// The user name or the password holds a line break, which ends a field of the token.
    #[error(
        "the user name and the password may not contain a line break (the token is one line \
         each)"
    )]
    LineBreak,
    /// The credentials are longer than one RSA block of the key carries.
    #[error(
        "the credentials ({len} bytes) do not fit one block of the {bits}-bit key {} with \
         {padding} padding (at most {max} bytes): use a shorter user name or password, or a \
         larger key", path.display()
    )]
    TooLong {
        /// The public key file.
        path: PathBuf,
        /// The token's plaintext length.
        len: usize,
        /// The key's size.
        bits: u32,
        /// The padding asked for.
        padding: Padding,
        /// The most one block carries with it.
        max: usize,
    },
    /// OpenSSL could not encrypt.
    #[error("encrypting the credentials with {}: {source}", path.display())]
    Encrypt {
        /// The public key file.
        path: PathBuf,
        /// OpenSSL's errors.
        source: ErrorStack,
    },
    /// PKCS#1 v1.5 decryption was asked for from an OpenSSL that would leak the key through it
    /// (only possible when built against the system's OpenSSL older than 3.2).
    #[error(
        "{} has no implicit rejection for PKCS#1 v1.5 decryption (OpenSSL 3.2 or later has it; \
         without it a network attacker can recover the private key from decryption timings): \
         build linerate with its vendored OpenSSL (do not set OPENSSL_NO_VENDOR)",
        openssl::version::version()
    )]
    NoImplicitRejection,
}

/// Why the server refuses a token. The messages go to the server's log and to a linerate
/// client; none tells whether a user exists.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// Longer than any RSA block's base64.
    #[error("a {0}-byte token (too long)")]
    TooLong(usize),
    /// Not base64.
    #[error("a token that is not base64")]
    NotBase64,
    /// OpenSSL refused the ciphertext: with OAEP any bad one; with PKCS#1 v1.5 only one of the
    /// wrong length or larger than the key's modulus (public facts).
    #[error(
        "a token this server's key cannot decrypt with {0} padding (made for another key, or \
         with the other padding: see --use-pkcs1-padding)"
    )]
    Undecryptable(Padding),
    /// The plaintext is not `user: …\npwd:  …\nts:   …`; with PKCS#1 v1.5 also what a bad
    /// padding decrypts to.
    #[error("a token that decrypts to no credentials{}", match .0 {
        Padding::Pkcs1 => " (made for another key or with OAEP padding, or damaged: see \
                           --use-pkcs1-padding)",
        Padding::Oaep => "",
    })]
    Format(Padding),
    /// The token's time is too far from the server's clock (a replay, or a clock off).
    #[error(
        "user {user:?}: the token's time is {skew} s from the server's (more than the \
         {threshold} s skew threshold)"
    )]
    Skew {
        /// The user named in the token.
        user: String,
        /// Seconds between the token's time and the server's.
        skew: u64,
        /// The threshold.
        threshold: u64,
    },
    /// Not an authorized user, or the wrong password: one answer for both.
    #[error("user {0:?}: wrong password or not an authorized user")]
    Credentials(String),
}

fn read(path: &Path, what: &'static str) -> Result<Vec<u8>, AuthError> {
    std::fs::read(path).map_err(|source| AuthError::Read {
        what,
        path: path.to_owned(),
        source,
    })
}

fn public_key(path: &Path) -> Result<PKey<Public>, AuthError> {
    let pem = read(path, "the RSA public key")?;
    let key = PKey::public_key_from_pem(&pem)
        .or_else(|e| {
            Rsa::public_key_from_pem_pkcs1(&pem)
                .and_then(PKey::from_rsa)
                .map_err(|_| e)
        })
        .map_err(|source| AuthError::PublicKey {
            path: path.to_owned(),
            source,
        })?;
    if key.id() != Id::RSA {
        return Err(AuthError::NotRsa {
            path: path.to_owned(),
            kind: key.id(),
        });
    }
    Ok(key)
}

/// Encrypts the credentials of `user` for the server whose public key is in `key_path`, with
/// `padding`; the base64 token iperf3 sends as `"authtoken"`.
pub fn client_token(
    key_path: &Path,
    user: &str,
    password: &str,
    ts: i64,
    padding: Padding,
) -> Result<String, AuthError> {
    if user.contains('\n') || password.contains('\n') {
        return Err(AuthError::LineBreak);
    }
    let key = public_key(key_path)?;
    let text = token::text(user, password, ts);
    let max = padding.capacity(key.size());
    if text.len() > max {
        return Err(AuthError::TooLong {
            path: key_path.to_owned(),
            len: text.len(),
            bits: key.bits(),
            padding,
            max,
        });
    }
    let encrypt = || -> Result<Vec<u8>, ErrorStack> {
        let mut e = Encrypter::new(&key)?;
        e.set_rsa_padding(padding.openssl())?;
        let mut ct = vec![0; e.encrypt_len(text.as_bytes())?];
        let n = e.encrypt(text.as_bytes(), &mut ct)?;
        ct.truncate(n);
        Ok(ct)
    };
    let ct = encrypt().map_err(|source| AuthError::Encrypt {
        path: key_path.to_owned(),
        source,
    })?;
    Ok(STANDARD.encode(ct))
}

/// The server side: its private key, the padding it expects, the authorized users and the skew
/// threshold.
pub struct Authorizer {
    key: PKey<Private>,
    padding: Padding,
    users: users::Users,
    skew: u64,
}

impl fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the key.
        f.debug_struct("Authorizer")
            .field("padding", &self.padding)
            .field("users", &self.users.len())
            .field("skew", &self.skew)
            .finish_non_exhaustive()
    }
}

impl Authorizer {
    /// Loads the private key and the users file; errors name the file (and line). PKCS#1 v1.5
    /// is refused unless the linked OpenSSL rejects bad padding implicitly.
    pub fn load(
        key_path: &Path,
        users_path: &Path,
        skew: u64,
        padding: Padding,
    ) -> Result<Authorizer, AuthError> {
        if padding == Padding::Pkcs1 && openssl::version::number() < IMPLICIT_REJECTION_SINCE {
            return Err(AuthError::NoImplicitRejection);
        }
        let pem = read(key_path, "the RSA private key")?;
        let key = PKey::private_key_from_pem(&pem).map_err(|source| AuthError::PrivateKey {
            path: key_path.to_owned(),
            source,
        })?;
        if key.id() != Id::RSA {
            return Err(AuthError::NotRsa {
                path: key_path.to_owned(),
                kind: key.id(),
            });
        }
        let text = read(users_path, "the authorized users")?;
        let users =
            users::Users::parse(&String::from_utf8_lossy(&text)).map_err(|(line, why)| {
                AuthError::Users {
                    path: users_path.to_owned(),
                    line,
                    why,
                }
            })?;
        Ok(Authorizer {
            key,
            padding,
            users,
            skew,
        })
    }

    /// The padding this server expects.
    pub fn padding(&self) -> Padding {
        self.padding
    }

    /// Decrypts a token's ciphertext. With PKCS#1 v1.5 a bad padding is not an error: OpenSSL
    /// returns a pseudo-random message instead (implicit rejection, see the module's notes).
    fn decrypt(&self, ct: &[u8]) -> Result<Vec<u8>, ErrorStack> {
        let mut d = Decrypter::new(&self.key)?;
        d.set_rsa_padding(self.padding.openssl())?;
        let mut pt = vec![0; d.decrypt_len(ct)?];
        let n = d.decrypt(ct, &mut pt)?;
        pt.truncate(n);
        Ok(pt)
    }

    /// Checks a token at time `now` (Unix seconds): the user's name, or why it is refused.
    pub fn check(&self, token: &str, now: i64) -> Result<String, Refused> {
        if token.len() > MAX_TOKEN_LEN {
            return Err(Refused::TooLong(token.len()));
        }
        let ct = STANDARD
            .decode(token.trim())
            .map_err(|_| Refused::NotBase64)?;
        let mut pt = self
            .decrypt(&ct)
            .map_err(|_| Refused::Undecryptable(self.padding))?;
        let verdict = self.judge(&pt, now);
        // The plaintext holds the password.
        pt.fill(0);
        verdict
    }

    fn judge(&self, pt: &[u8], now: i64) -> Result<String, Refused> {
        let c = token::parse(pt).ok_or(Refused::Format(self.padding))?;
        let user = String::from_utf8_lossy(c.user).into_owned();
        let skew = now.abs_diff(c.ts);
        if skew > self.skew {
            return Err(Refused::Skew {
                user,
                skew,
                threshold: self.skew,
            });
        }
        if self.users.admits(c.user, c.password) {
            Ok(user)
        } else {
            Err(Refused::Credentials(user))
        }
    }
}

#[cfg(test)]
mod tests;
