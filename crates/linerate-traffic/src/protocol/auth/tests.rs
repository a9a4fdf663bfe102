use std::sync::OnceLock;

use openssl::rsa::Rsa;

use super::*;

const NOW: i64 = 1_700_000_000;
const MARIO: &str = "mario,bf7a49a846d44b454a5d11e7acfaf13d138bbe0b7483aa3e050879700572709b\n";

/// A private key's PKCS#8 PEM and its public key's SubjectPublicKeyInfo PEM (made once: key
/// generation is the slow part).
fn pems(n: usize) -> &'static (Vec<u8>, Vec<u8>) {
    static KEYS: [OnceLock<(Vec<u8>, Vec<u8>)>; 2] = [OnceLock::new(), OnceLock::new()];
    KEYS[n].get_or_init(|| {
        let rsa = Rsa::generate(2048).expect("RSA key");
        let key = PKey::from_rsa(rsa).expect("PKey");
        (
            key.private_key_to_pem_pkcs8().expect("PEM"),
            key.public_key_to_pem().expect("PEM"),
        )
    })
}

/// Key pair `n`'s files and a users file for mario/rossi, in a fresh directory.
struct Files {
    _dir: tempfile::TempDir,
    private: PathBuf,
    public: PathBuf,
    users: PathBuf,
}

fn files(n: usize) -> Files {
    let dir = tempfile::tempdir().expect("tempdir");
    let (private_pem, public_pem) = pems(n);
    let private = dir.path().join("private.pem");
    let public = dir.path().join("public.pem");
    let users = dir.path().join("users.csv");
    std::fs::write(&private, private_pem).expect("write");
    std::fs::write(&public, public_pem).expect("write");
    std::fs::write(&users, format!("# iperf3 users\n{MARIO}")).expect("write");
    Files {
        _dir: dir,
        private,
        public,
        users,
    }
}

fn server(f: &Files, padding: Padding) -> Authorizer {
    Authorizer::load(&f.private, &f.users, DEFAULT_SKEW_SECS, padding).expect("load")
}

fn token(f: &Files, password: &str, ts: i64, padding: Padding) -> String {
    client_token(&f.public, "mario", password, ts, padding).expect("token")
}

#[test]
fn the_linked_openssl_rejects_bad_pkcs1_padding_implicitly() {
    assert!(
        openssl::version::number() >= IMPLICIT_REJECTION_SINCE,
        "{}",
        openssl::version::version()
    );
}

#[test]
fn right_credentials_pass_with_either_padding() {
    let f = files(0);
    for padding in [Padding::Oaep, Padding::Pkcs1] {
        let s = server(&f, padding);
        assert_eq!(
            s.check(&token(&f, "rossi", NOW, padding), NOW),
            Ok("mario".into())
        );
        // Within the skew threshold, either side of the server's clock.
        assert!(s.check(&token(&f, "rossi", NOW - 10, padding), NOW).is_ok());
        assert!(s.check(&token(&f, "rossi", NOW + 10, padding), NOW).is_ok());
    }
}

#[test]
fn oaep_tokens_are_randomized() {
    let f = files(0);
    assert_ne!(
        token(&f, "rossi", NOW, Padding::Oaep),
        token(&f, "rossi", NOW, Padding::Oaep)
    );
}

#[test]
fn a_bad_pkcs1_padding_decrypts_to_pseudo_random_bytes_that_fail_the_parse() {
    let f = files(0);
    let s = server(&f, Padding::Pkcs1);
    let rsa = Rsa::public_key_from_pem(&pems(0).1).expect("public key");
    let text = token::text("mario", "rossi", NOW);
    let k = rsa.size() as usize;
    // Blocks whose PKCS#1 v1.5 encryption padding is wrong: a signature's block type (00 01
    // FF…), a type-2 block whose padding string ends at once (00 02 00…), a first byte not 0.
    let mut signature = vec![0xff; k];
    signature[..2].copy_from_slice(&[0, 1]);
    signature[k - text.len() - 1] = 0;
    signature[k - text.len()..].copy_from_slice(text.as_bytes());
    let mut short = vec![0x5a; k];
    short[..3].copy_from_slice(&[0, 2, 0]);
    let mut high = vec![0x11; k];
    high[0] = 0x01;
    for block in [signature, short, high] {
        let mut ct = vec![0; k];
        let n = rsa
            .public_encrypt(&block, &mut ct, openssl::rsa::Padding::NONE)
            .expect("raw RSA");
        assert_eq!(n, k);
        // Not an error: a message, the same one each time for this key and ciphertext.
        let first = s
            .decrypt(&ct)
            .expect("implicit rejection returns a message");
        let again = s
            .decrypt(&ct)
            .expect("implicit rejection returns a message");
        assert_eq!(first, again);
        assert_ne!(first, text.as_bytes());
        assert_eq!(
            s.check(&STANDARD.encode(&ct), NOW),
            Err(Refused::Format(Padding::Pkcs1))
        );
    }
}

#[test]
fn a_server_uses_its_own_padding_only() {
    let f = files(0);
    // An OAEP server cannot decrypt a PKCS#1 token (iperf3 3.12's, or 3.17's with the flag).
    let oaep = server(&f, Padding::Oaep);
    assert_eq!(
        oaep.check(&token(&f, "rossi", NOW, Padding::Pkcs1), NOW),
        Err(Refused::Undecryptable(Padding::Oaep))
    );
    // A PKCS#1 server decrypts an OAEP token to bytes that are not credentials.
    let pkcs1 = server(&f, Padding::Pkcs1);
    assert_eq!(
        pkcs1.check(&token(&f, "rossi", NOW, Padding::Oaep), NOW),
        Err(Refused::Format(Padding::Pkcs1))
    );
}

#[test]
fn wrong_key_password_time_and_format_are_refused() {
    let f = files(0);
    let other = files(1);
    for padding in [Padding::Oaep, Padding::Pkcs1] {
        let s = server(&f, padding);
        let wrong_key = s.check(&token(&other, "rossi", NOW, padding), NOW);
        assert!(
            matches!(
                wrong_key,
                Err(Refused::Undecryptable(_) | Refused::Format(_))
            ),
            "{wrong_key:?}"
        );
        assert_eq!(
            s.check(&token(&f, "verdi", NOW, padding), NOW),
            Err(Refused::Credentials("mario".into()))
        );
        let luigi = client_token(&f.public, "luigi", "rossi", NOW, padding).expect("token");
        assert_eq!(
            s.check(&luigi, NOW),
            Err(Refused::Credentials("luigi".into()))
        );
        // A token replayed a minute after it was made.
        assert_eq!(
            s.check(&token(&f, "rossi", NOW - 60, padding), NOW),
            Err(Refused::Skew {
                user: "mario".into(),
                skew: 60,
                threshold: DEFAULT_SKEW_SECS
            })
        );
        assert_eq!(s.check("not base64!", NOW), Err(Refused::NotBase64));
        assert_eq!(
            s.check(&"A".repeat(MAX_TOKEN_LEN + 4), NOW),
            Err(Refused::TooLong(MAX_TOKEN_LEN + 4))
        );
        // Longer than the key's modulus: an error with either padding.
        assert_eq!(
            s.check(&STANDARD.encode([7u8; 300]), NOW),
            Err(Refused::Undecryptable(padding))
        );
        // Shorter: OpenSSL reads it as a smaller number, which PKCS#1 v1.5 decrypts implicitly
        // rejected, to bytes that are no token.
        let short = match padding {
            Padding::Oaep => Refused::Undecryptable(padding),
            Padding::Pkcs1 => Refused::Format(padding),
        };
        assert_eq!(s.check(&STANDARD.encode([7u8; 100]), NOW), Err(short));
        assert_eq!(s.check("", NOW), Err(Refused::Undecryptable(padding)));
    }
}

#[test]
fn keys_load_in_either_pem_form_and_other_keys_are_named() {
    let f = files(0);
    let rsa = Rsa::private_key_from_pem(&pems(0).0).expect("key");
    // PKCS#1 private ("BEGIN RSA PRIVATE KEY") and public ("BEGIN RSA PUBLIC KEY").
    std::fs::write(&f.private, rsa.private_key_to_pem().expect("PEM")).expect("write");
    std::fs::write(&f.public, rsa.public_key_to_pem_pkcs1().expect("PEM")).expect("write");
    let s = server(&f, Padding::Oaep);
    assert!(
        s.check(&token(&f, "rossi", NOW, Padding::Oaep), NOW)
            .is_ok()
    );

    let ec = openssl::ec::EcKey::generate(
        &openssl::ec::EcGroup::from_curve_name(openssl::nid::Nid::X9_62_PRIME256V1).expect("P-256"),
    )
    .expect("EC key");
    std::fs::write(&f.private, ec.private_key_to_pem().expect("PEM")).expect("write");
    let e = Authorizer::load(&f.private, &f.users, 10, Padding::Oaep).expect_err("EC");
    assert!(matches!(e, AuthError::NotRsa { .. }), "{e}");

    std::fs::write(&f.private, "not a key").expect("write");
    let e = Authorizer::load(&f.private, &f.users, 10, Padding::Oaep).expect_err("garbage");
    assert!(e.to_string().contains("openssl genrsa"), "{e}");
    std::fs::write(&f.public, "not a key").expect("write");
    let e = client_token(&f.public, "mario", "rossi", NOW, Padding::Oaep).expect_err("garbage");
    assert!(e.to_string().contains("-pubout"), "{e}");
    let missing = f.private.with_file_name("missing.pem");
    let e = Authorizer::load(&missing, &f.users, 10, Padding::Oaep).expect_err("missing");
    assert!(e.to_string().contains("missing.pem"), "{e}");
}

#[test]
fn a_bad_users_line_is_named_with_its_file_and_line() {
    let f = files(0);
    std::fs::write(&f.users, format!("{MARIO}# c\nluigi,abc\n")).expect("write");
    let e = Authorizer::load(&f.private, &f.users, 10, Padding::Oaep).expect_err("bad line");
    assert!(e.to_string().contains("users.csv:3: "), "{e}");
}

#[test]
fn credentials_that_cannot_travel_are_refused_at_the_client() {
    let f = files(0);
    let e = client_token(&f.public, "mario", "a\nb", NOW, Padding::Oaep).expect_err("newline");
    assert!(matches!(e, AuthError::LineBreak), "{e}");
    // 2048 bits: 214 bytes with OAEP, 245 with PKCS#1 v1.5; the rest of the text takes 35.
    let long = "x".repeat(190);
    assert!(client_token(&f.public, "mario", &long, NOW, Padding::Pkcs1).is_ok());
    let e = client_token(&f.public, "mario", &long, NOW, Padding::Oaep).expect_err("too long");
    assert!(e.to_string().contains("at most 214 bytes"), "{e}");
}
