//! Per-lab key material: a self-signed certificate per OpenVPN peer (pinned by its SHA-256
//! fingerprint, so no CA is needed) and an x25519 key pair per WireGuard peer.

use std::io::Read;

use base64::Engine as _;
use sha2::{Digest, Sha256};

use crate::LabError;

/// A self-signed certificate and its private key, PEM-encoded.
#[derive(Debug, Clone)]
pub struct PeerCert {
    /// The certificate (PEM).
    pub cert_pem: String,
    /// The private key (PEM, PKCS#8).
    pub key_pem: String,
    /// SHA-256 of the certificate's DER bytes as OpenVPN's `--peer-fingerprint` wants it:
    /// upper-case hex pairs joined by colons.
    pub fingerprint: String,
}

/// Generates a fresh self-signed certificate for `common_name`.
pub fn peer_cert(common_name: &str) -> Result<PeerCert, LabError> {
    let ck = rcgen::generate_simple_self_signed(vec![common_name.to_owned()]).map_err(|e| {
        LabError::Io {
            what: format!("generate a certificate for {common_name}"),
            source: std::io::Error::other(e.to_string()),
        }
    })?;
    let der: &[u8] = ck.cert.der();
    Ok(PeerCert {
        cert_pem: ck.cert.pem(),
        key_pem: ck.signing_key.serialize_pem(),
        fingerprint: fingerprint(der),
    })
}

/// `AB:CD:…` SHA-256 of `der`.
pub fn fingerprint(der: &[u8]) -> String {
    Sha256::digest(der)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// A WireGuard key pair, base64 as `wg` reads and prints them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WgKeys {
    /// The private key (base64 of 32 clamped bytes).
    pub private: String,
    /// The public key (base64).
    pub public: String,
}

/// A key pair from 32 secret bytes (clamped as Curve25519 requires).
pub fn wg_keys_from(mut secret: [u8; 32]) -> WgKeys {
    secret[0] &= 248;
    secret[31] &= 127;
    secret[31] |= 64;
    let public = x25519_dalek::x25519(secret, x25519_dalek::X25519_BASEPOINT_BYTES);
    let b64 = base64::engine::general_purpose::STANDARD;
    WgKeys {
        private: b64.encode(secret),
        public: b64.encode(public),
    }
}

/// A fresh key pair from the kernel's random source.
pub fn wg_keys() -> Result<WgKeys, LabError> {
    let mut secret = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut secret))
        .map_err(LabError::io("read 32 random bytes from /dev/urandom"))?;
    Ok(wg_keys_from(secret))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wireguard_public_key_matches_rfc7748_test_vector() {
        // RFC 7748 section 6.1: Alice's private key and public key.
        let hex = |s: &str| -> [u8; 32] {
            let mut out = [0u8; 32];
            for (i, o) in out.iter_mut().enumerate() {
                *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap_or(0);
            }
            out
        };
        let keys = wg_keys_from(hex(
            "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a",
        ));
        let b64 = base64::engine::general_purpose::STANDARD;
        assert_eq!(
            keys.public,
            b64.encode(hex(
                "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"
            ))
        );
        assert_eq!(keys.private.len(), 44);
    }

    #[test]
    fn fresh_wireguard_keys_differ() -> Result<(), LabError> {
        let (a, b) = (wg_keys()?, wg_keys()?);
        assert_ne!(a, b);
        assert_ne!(a.private, a.public);
        Ok(())
    }

    #[test]
    fn certificate_fingerprint_is_sha256_of_the_der() -> Result<(), LabError> {
        let c = peer_cert("gen")?;
        assert!(c.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(c.key_pem.contains("PRIVATE KEY"));
        assert_eq!(c.fingerprint.len(), 32 * 3 - 1);
        assert!(
            c.fingerprint
                .chars()
                .all(|ch| ch == ':' || ch.is_ascii_hexdigit())
        );
        assert_ne!(peer_cert("gen")?.fingerprint, c.fingerprint);
        // SHA-256 of the empty string, formatted.
        assert!(fingerprint(b"").starts_with("E3:B0:C4:42"));
        Ok(())
    }
}
