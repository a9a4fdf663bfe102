//! Saying that a feature is not on this operating system, one way everywhere: what needs
//! which system and why, which system this is, and what to do instead —
//! "`linerate lab` needs Linux (its test beds are network namespaces …); this is FreeBSD: run
//! the lab on a Linux host …". Code that exists on one OS only is absent on the others (no
//! stubs); the `cfg` branch that stands in for it returns a [`NotOnThisOs`].

use std::fmt;
use std::io;

/// The operating system this binary runs on, as people write it (`Linux`, `FreeBSD`,
/// `macOS`); an unfamiliar one as Rust names it.
pub fn this_os() -> &'static str {
    pretty_os(std::env::consts::OS)
}

fn pretty_os(os: &'static str) -> &'static str {
    match os {
        "linux" => "Linux",
        "freebsd" => "FreeBSD",
        "openbsd" => "OpenBSD",
        "netbsd" => "NetBSD",
        "dragonfly" => "DragonFly BSD",
        "macos" => "macOS",
        "ios" => "iOS",
        "windows" => "Windows",
        "android" => "Android",
        "illumos" => "illumos",
        "solaris" => "Solaris",
        other => other,
    }
}

/// A feature this operating system does not have. Its message names the feature, the system
/// it needs and why, this system, and (when there is one) what to do here instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotOnThisOs {
    /// The feature, as the user asked for it (`` `linerate lab` ``, `--netns`).
    pub what: &'static str,
    /// The system(s) it needs (`Linux`, `Linux or FreeBSD`).
    pub needs: &'static str,
    /// Why: what it is built on that the others lack.
    pub why: &'static str,
    /// What to do on this system instead, if anything.
    pub instead: Option<String>,
    /// The system this is (normally [`this_os`]; fixed in tests).
    pub this: &'static str,
}

impl NotOnThisOs {
    /// `what` needs Linux, because `why`.
    pub fn linux(what: &'static str, why: &'static str) -> Self {
        Self::needs("Linux", what, why)
    }

    /// `what` needs `needs` (`Linux or FreeBSD`), because `why`.
    pub fn needs(needs: &'static str, what: &'static str, why: &'static str) -> Self {
        NotOnThisOs {
            what,
            needs,
            why,
            instead: None,
            this: this_os(),
        }
    }

    /// What to do on this system instead.
    #[must_use]
    pub fn instead(self, instead: impl Into<String>) -> Self {
        NotOnThisOs {
            instead: Some(instead.into()),
            ..self
        }
    }
}

impl fmt::Display for NotOnThisOs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} needs {} ({}); this is {}",
            self.what, self.needs, self.why, self.this
        )?;
        match &self.instead {
            Some(instead) => write!(f, ": {instead}"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for NotOnThisOs {}

impl From<NotOnThisOs> for io::Error {
    /// An [`io::ErrorKind::Unsupported`] error with the message, for calls that return
    /// `io::Result` (their callers may fall back, as on a Linux kernel without the feature).
    fn from(e: NotOnThisOs) -> io::Error {
        io::Error::new(io::ErrorKind::Unsupported, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_feature_the_system_it_needs_why_this_system_and_what_instead() {
        let e = NotOnThisOs {
            this: pretty_os("freebsd"),
            ..NotOnThisOs::linux("`linerate lab`", "its test beds are network namespaces")
        };
        assert_eq!(
            e.to_string(),
            "`linerate lab` needs Linux (its test beds are network namespaces); this is FreeBSD"
        );
        let e = e.instead("run it on a Linux host");
        assert!(
            e.to_string()
                .ends_with("; this is FreeBSD: run it on a Linux host")
        );
        let io: io::Error = e.clone().into();
        assert_eq!(io.kind(), io::ErrorKind::Unsupported);
        assert_eq!(io.to_string(), e.to_string());
        assert_eq!(pretty_os("macos"), "macOS");
        assert_eq!(pretty_os("haiku"), "haiku");
    }
}
