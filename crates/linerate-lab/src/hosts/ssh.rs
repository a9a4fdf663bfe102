//! One host reached with OpenSSH's `ssh`: the user's own keys and agent, `BatchMode` (a
//! password prompt is a refusal, never a hang), the ssh config file the experiment names.
//! Remote commands are given as words, each quoted for the remote shell.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::LabError;
use crate::bed::Node;
use crate::child::wait_bounded;
use crate::experiment::HostSpec;

/// How long a short remote command (a check, an apply, a rollback) may take.
pub const SHORT: Duration = Duration::from_secs(30);

/// ssh's exit status when it could not connect (or the remote side closed unexpectedly).
const SSH_FAILED: i32 = 255;

/// A host and how to reach it.
#[derive(Debug, Clone)]
pub struct SshHost {
    /// What the experiment says of it.
    pub spec: HostSpec,
    /// The ssh config file (`-F`), if any.
    pub config: Option<PathBuf>,
}

/// What a remote command printed and how it ended.
#[derive(Debug)]
pub struct Remote {
    /// Its exit status (`None`: killed by a signal).
    pub code: Option<i32>,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
}

impl Remote {
    /// Whether it exited 0.
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }

    /// Its error output, trimmed, or the exit status when there is none.
    pub fn reason(&self) -> String {
        let e = self.stderr.trim();
        if e.is_empty() {
            match self.code {
                Some(c) => format!("exit status {c}"),
                None => "killed by a signal".to_owned(),
            }
        } else {
            e.to_owned()
        }
    }
}

/// `word` quoted for a POSIX shell.
pub fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c))
    {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

impl SshHost {
    /// The host `spec` describes, reached through `config` when given.
    pub fn new(spec: HostSpec, config: Option<PathBuf>) -> SshHost {
        SshHost { spec, config }
    }

    /// `role (destination)`, as messages name the host.
    pub fn label(&self) -> String {
        format!("{} ({})", self.spec.role, self.spec.ssh)
    }

    /// The `ssh` command that runs the shell text `remote` on the host.
    fn ssh(&self, remote: &str) -> Command {
        let mut cmd = Command::new("ssh");
        // Its own process group: a Ctrl-C at the terminal reaches the runner, which stops
        // between steps and rolls back, not the ssh of a step under way.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        if let Some(c) = &self.config {
            cmd.arg("-F").arg(c);
        }
        cmd.args([
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=10",
            "-o",
            "ServerAliveInterval=5",
            "--",
            &self.spec.ssh,
            remote,
        ]);
        cmd
    }

    /// Words as a remote command line; `privileged` puts `sudo -n` in front when the host
    /// says so.
    pub fn line(&self, words: &[&str], privileged: bool) -> String {
        let mut out = Vec::with_capacity(words.len() + 2);
        if privileged && self.spec.sudo {
            out.extend(["sudo".to_owned(), "-n".to_owned()]);
        }
        out.extend(words.iter().map(|w| quote(w)));
        out.join(" ")
    }

    /// Runs the shell text `remote` on the host and waits (at most `limit`) for it.
    pub fn run(&self, remote: &str, limit: Duration) -> Result<Remote, LabError> {
        let mut child = self
            .ssh(remote)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| spawn_error(e, &self.label()))?;
        let pipe = |p: Option<Box<dyn std::io::Read + Send>>| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                if let Some(mut p) = p {
                    let _ = p.read_to_end(&mut buf);
                }
                String::from_utf8_lossy(&buf).into_owned()
            })
        };
        let out = pipe(child.stdout.take().map(|p| Box::new(p) as _));
        let err = pipe(child.stderr.take().map(|p| Box::new(p) as _));
        let status = wait_bounded(&mut child, limit, &|| false);
        let stdout = out.join().unwrap_or_default();
        let stderr = err.join().unwrap_or_default();
        let status = status.map_err(|e| LabError::Host {
            host: self.label(),
            reason: format!("`{remote}`: {e}"),
        })?;
        let remote_result = Remote {
            code: status.code(),
            stdout,
            stderr,
        };
        if remote_result.code == Some(SSH_FAILED) {
            return Err(LabError::Host {
                host: self.label(),
                reason: format!("ssh failed: {}", remote_result.reason()),
            });
        }
        Ok(remote_result)
    }

    /// Runs `words` (privileged when asked) and fails unless it exits 0.
    pub fn must(&self, words: &[&str], privileged: bool) -> Result<Remote, LabError> {
        let line = self.line(words, privileged);
        let r = self.run(&line, SHORT)?;
        if r.ok() {
            Ok(r)
        } else {
            Err(LabError::Host {
                host: self.label(),
                reason: format!("`{line}` failed: {}", r.reason()),
            })
        }
    }
}

fn spawn_error(e: std::io::Error, host: &str) -> LabError {
    if e.kind() == std::io::ErrorKind::NotFound {
        LabError::MissingTool {
            tool: "ssh".into(),
            package: "openssh-client".into(),
        }
    } else {
        LabError::Io {
            what: format!("run ssh for {host}"),
            source: e,
        }
    }
}

impl Node for SshHost {
    fn label(&self) -> String {
        SshHost::label(self)
    }

    fn spawn(&self, program: &str, args: &[String], stdout: Stdio) -> Result<Child, LabError> {
        let mut words = vec![program];
        words.extend(args.iter().map(String::as_str));
        self.ssh(&self.line(&words, false))
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| spawn_error(e, &SshHost::label(self)))
    }
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn words_are_quoted_for_the_remote_shell_only_when_needed() {
        assert_eq!(quote("net.ipv4.tcp_wmem=4096"), "net.ipv4.tcp_wmem=4096");
        assert_eq!(quote("4096 16384 4194304"), "'4096 16384 4194304'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("$(reboot)"), "'$(reboot)'");
    }
}
