//! The client side of iperf3's RSA authentication as flags (`--username`,
//! `--rsa-public-key-path`, `--use-pkcs1-padding`, the password in `IPERF3_PASSWORD`):
//! `client` and `rfc2544 --rx-host` (its frame counter's server) take them alike.

/// The credentials' flags.
#[derive(Debug, clap::Args)]
pub struct AuthArgs {
    /// Authenticate as this user (iperf3's RSA authentication; the password is read from
    /// IPERF3_PASSWORD); needs --rsa-public-key-path
    #[arg(long, value_name = "USER")]
    pub username: Option<String>,
    /// The server's RSA public key (PEM) to encrypt the credentials with; needs --username
    #[arg(long, value_name = "PATH")]
    pub rsa_public_key_path: Option<std::path::PathBuf>,
    /// Encrypt the credentials with PKCS#1 v1.5 padding instead of OAEP: what an iperf3 server
    /// before 3.17 (Debian 12's 3.12) reads, and a 3.17+ server started with the same flag.
    /// Like iperf3 3.17+, the default is OAEP, which older servers cannot decrypt
    #[arg(long, requires = "rsa_public_key_path")]
    pub use_pkcs1_padding: bool,
}

impl AuthArgs {
    /// iperf3's authentication token, when `--username` and `--rsa-public-key-path` are given.
    pub fn authtoken(&self) -> anyhow::Result<Option<String>> {
        let (user, key) = match (&self.username, &self.rsa_public_key_path) {
            (None, None) => return Ok(None),
            (Some(u), Some(k)) => (u, k),
            (Some(_), None) => anyhow::bail!("--username needs --rsa-public-key-path"),
            (None, Some(_)) => anyhow::bail!("--rsa-public-key-path needs --username"),
        };
        let Ok(password) = std::env::var("IPERF3_PASSWORD") else {
            anyhow::bail!(
                "--username {user}: set the password in the IPERF3_PASSWORD environment variable"
            );
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        use linerate_traffic::protocol::auth;
        let padding = if self.use_pkcs1_padding {
            auth::Padding::Pkcs1
        } else {
            auth::Padding::Oaep
        };
        Ok(Some(auth::client_token(
            key, user, &password, now, padding,
        )?))
    }
}
