//! CPU time counters by CPU and by thread, for saying where a test's CPU went: each CPU's
//! user, system, interrupt and softirq time since boot (Linux `/proc/stat`, FreeBSD
//! `kern.cp_times`), and one thread's user and system time and the CPU it last ran on (Linux
//! `/proc/self/task/TID/stat`).
//!
//! The counters are ticks (Linux: `USER_HZ`, [`ticks_per_second`]; FreeBSD: `stathz`):
//! shares of one CPU need no tick rate (a state's ticks over all ticks), a thread's time in
//! seconds does. Per-CPU counters are the whole system's: two network namespaces on one
//! host see the same CPUs. The parsers are portable (tested on every OS); the reads are not.

use std::io;

/// One CPU's time counters, ticks since boot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// CPU number.
    pub cpu: usize,
    /// User time, niced included.
    pub user: u64,
    /// Kernel time outside interrupts.
    pub system: u64,
    /// Idle.
    pub idle: u64,
    /// Idle while I/O was outstanding (Linux; `None` on FreeBSD).
    pub iowait: Option<u64>,
    /// Hardware interrupts (FreeBSD: all interrupt time, its interrupt threads included).
    pub irq: u64,
    /// Software interrupts: where Linux processes received packets (`None` on FreeBSD, whose
    /// network stack runs in interrupt threads, counted in `irq`).
    pub softirq: Option<u64>,
    /// Time a hypervisor ran something else (Linux).
    pub steal: Option<u64>,
}

impl CpuTicks {
    /// Every tick counted, in any state.
    pub fn total(&self) -> u64 {
        self.user
            .saturating_add(self.system)
            .saturating_add(self.idle)
            .saturating_add(self.iowait.unwrap_or(0))
            .saturating_add(self.irq)
            .saturating_add(self.softirq.unwrap_or(0))
            .saturating_add(self.steal.unwrap_or(0))
    }
}

/// One thread's CPU time and placement.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadTicks {
    /// User time, ticks.
    pub user: u64,
    /// System time, ticks.
    pub system: u64,
    /// The CPU it last ran on.
    pub cpu: usize,
}

/// A `/proc` line that does not read as expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: {why}: {line:?}")]
pub struct ParseError {
    /// The file or source (`/proc/stat`).
    pub what: String,
    /// What is wrong.
    pub why: String,
    /// The line (cut at 120 characters).
    pub line: String,
}

impl ParseError {
    fn new(what: &str, why: impl Into<String>, line: &str) -> ParseError {
        ParseError {
            what: what.to_owned(),
            why: why.into(),
            line: line.chars().take(120).collect(),
        }
    }
}

impl From<ParseError> for io::Error {
    fn from(e: ParseError) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, e)
    }
}

/// The `cpuN` lines of Linux's `/proc/stat`: `cpuN user nice system idle iowait irq softirq
/// steal guest guest_nice` (guest time is already inside user; kernels before 2.6.33 stop
/// earlier, and what they lack is `None`). The summary `cpu` line and other lines are skipped.
pub fn parse_proc_stat(text: &str) -> Result<Vec<CpuTicks>, ParseError> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut words = line.split_ascii_whitespace();
        let Some(first) = words.next() else { continue };
        let Some(n) = first.strip_prefix("cpu").filter(|n| !n.is_empty()) else {
            continue;
        };
        let bad = |why: &str| ParseError::new("/proc/stat", why, line);
        let cpu = n.parse::<usize>().map_err(|_| bad("not a CPU number"))?;
        let v = words
            .map(str::parse::<u64>)
            .collect::<Result<Vec<u64>, _>>()
            .map_err(|_| bad("a counter is not a number"))?;
        if v.len() < 4 {
            return Err(bad("fewer than 4 counters"));
        }
        let at = |i: usize| v.get(i).copied();
        out.push(CpuTicks {
            cpu,
            user: v[0].saturating_add(v[1]),
            system: v[2],
            idle: v[3],
            iowait: at(4),
            irq: at(5).unwrap_or(0),
            softirq: at(6),
            steal: at(7),
        });
    }
    Ok(out)
}

/// Linux's `/proc/PID/task/TID/stat`: user time (field 14), system time (15) and the CPU it
/// last ran on (39). The name (field 2) is in parentheses and may hold spaces and
/// parentheses itself, so fields are counted from the last `)`.
pub fn parse_task_stat(text: &str) -> Result<ThreadTicks, ParseError> {
    let what = "/proc/self/task/TID/stat";
    let line = text.trim_end();
    let rest = line
        .rfind(')')
        .map(|i| &line[i + 1..])
        .ok_or_else(|| ParseError::new(what, "no (name)", line))?;
    // After the name: field 3 (state) is the first word.
    let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
    let field = |n: usize, name: &str| -> Result<u64, ParseError> {
        let s = fields
            .get(n - 3)
            .ok_or_else(|| ParseError::new(what, format!("no field {n} ({name})"), line))?;
        s.parse()
            .map_err(|_| ParseError::new(what, format!("field {n} ({name}) is not a count"), line))
    };
    Ok(ThreadTicks {
        user: field(14, "utime")?,
        system: field(15, "stime")?,
        cpu: usize::try_from(field(39, "processor")?).unwrap_or(usize::MAX),
    })
}

/// FreeBSD's `kern.cp_times`: `long`s, five per CPU (user, nice, system, interrupt, idle).
pub fn decode_cp_times(bytes: &[u8]) -> Result<Vec<CpuTicks>, ParseError> {
    const STATES: usize = 5;
    const LONG: usize = 8;
    if bytes.len() % (STATES * LONG) != 0 {
        return Err(ParseError::new(
            "kern.cp_times",
            format!("{} bytes is not a whole number of CPUs", bytes.len()),
            "",
        ));
    }
    let longs: Vec<u64> = bytes
        .chunks_exact(LONG)
        .map(|c| {
            let mut b = [0u8; LONG];
            b.copy_from_slice(c);
            u64::try_from(i64::from_ne_bytes(b)).unwrap_or(0)
        })
        .collect();
    Ok(longs
        .chunks_exact(STATES)
        .enumerate()
        .map(|(cpu, s)| CpuTicks {
            cpu,
            user: s[0].saturating_add(s[1]),
            system: s[2],
            irq: s[3],
            idle: s[4],
            iowait: None,
            softirq: None,
            steal: None,
        })
        .collect())
}

/// Every CPU's counters now.
#[cfg(target_os = "linux")]
pub fn cpus() -> io::Result<Vec<CpuTicks>> {
    Ok(parse_proc_stat(&std::fs::read_to_string("/proc/stat")?)?)
}

/// Every CPU's counters now.
#[cfg(target_os = "freebsd")]
pub fn cpus() -> io::Result<Vec<CpuTicks>> {
    let raw = crate::sysctl::read_raw("kern.cp_times").map_err(io::Error::other)?;
    Ok(decode_cp_times(&raw)?)
}

/// The calling thread's id (`gettid`), for [`thread`].
#[cfg(target_os = "linux")]
pub fn current_thread_id() -> u32 {
    u32::try_from(nix::unistd::gettid().as_raw()).unwrap_or(0)
}

/// One thread of this process, by its id ([`current_thread_id`] in that thread). Fails once
/// the thread has ended.
#[cfg(target_os = "linux")]
pub fn thread(tid: u32) -> io::Result<ThreadTicks> {
    let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat"))?;
    Ok(parse_task_stat(&text)?)
}

/// Ticks per second of [`thread`]'s and [`cpus`]' counters (`USER_HZ`, almost always 100).
#[cfg(target_os = "linux")]
pub fn ticks_per_second() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .and_then(|t| u64::try_from(t).ok())
        .filter(|&t| t > 0)
        .unwrap_or(100)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  4705 356 584 3699 23 23 0 0 0 0
cpu0 1393280 32966 572056 13343292 6130 0 17875 0 0 0
cpu1 1335 3 2 100 0 5 40 7
intr 114930548 113199788 3 0 5 263 0 4 [... 200 more]
ctxt 1990473
btime 1062191376
procs_running 2
";

    #[test]
    fn proc_stat_cpu_lines_read_and_the_rest_is_skipped() {
        let c = parse_proc_stat(STAT).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].cpu, 0);
        assert_eq!(c[0].user, 1_393_280 + 32_966, "nice counts as user");
        assert_eq!(
            (c[0].system, c[0].idle, c[0].irq, c[0].softirq),
            (572_056, 13_343_292, 0, Some(17_875))
        );
        assert_eq!(
            (c[1].steal, c[1].softirq, c[1].iowait),
            (Some(7), Some(40), Some(0))
        );
        assert_eq!(c[1].total(), 1335 + 3 + 2 + 100 + 5 + 40 + 7);
    }

    #[test]
    fn old_kernels_short_lines_leave_what_they_lack_unknown() {
        let c = parse_proc_stat("cpu3 10 0 5 80\n").unwrap();
        assert_eq!(c[0].cpu, 3);
        assert_eq!((c[0].iowait, c[0].softirq, c[0].steal), (None, None, None));
        assert_eq!(c[0].total(), 95);
    }

    #[test]
    fn bad_proc_stat_lines_say_what_and_where() {
        let e = parse_proc_stat("cpu0 1 2 x 4\n").unwrap_err();
        assert!(
            e.to_string().contains("not a number") && e.line.contains("cpu0"),
            "{e}"
        );
        assert!(parse_proc_stat("cpuX 1 2 3 4\n").is_err());
        assert!(
            parse_proc_stat("cpu0 1 2\n")
                .unwrap_err()
                .why
                .contains("fewer")
        );
    }

    #[test]
    fn task_stat_fields_count_from_the_last_parenthesis() {
        // A thread named "lr (stream) 1": spaces and parentheses in the name.
        let line = "4242 (lr (stream) 1) S 4240 4240 100 34816 4240 4194368 135 0 0 0 \
                    731 2048 0 0 20 0 3 0 12345 1000000 200 18446744073709551615 1 1 0 0 0 \
                    0 0 4096 0 0 0 0 -1 5 0 0 0 0 0\n";
        let t = parse_task_stat(line).unwrap();
        assert_eq!((t.user, t.system, t.cpu), (731, 2048, 5));
        let e = parse_task_stat("4242 (x) S 1 2 3").unwrap_err();
        assert!(e.why.contains("field 14"), "{e}");
        assert!(parse_task_stat("garbage").unwrap_err().why.contains("name"));
    }

    #[test]
    fn cp_times_are_five_longs_per_cpu() {
        let v: Vec<u8> = [1i64, 2, 3, 4, 90, 10, 0, 20, 0, 70]
            .iter()
            .flat_map(|x| x.to_ne_bytes())
            .collect();
        let c = decode_cp_times(&v).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!((c[0].user, c[0].system, c[0].irq, c[0].idle), (3, 3, 4, 90));
        assert_eq!((c[1].cpu, c[1].softirq), (1, None));
        assert!(decode_cp_times(&v[..12]).is_err());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_thread_and_every_cpu_read_live() {
        let cpus = cpus().unwrap();
        assert!(!cpus.is_empty());
        assert!(cpus.iter().all(|c| c.total() > 0 && c.softirq.is_some()));
        let before = thread(current_thread_id()).unwrap();
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed() < std::time::Duration::from_millis(100) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let after = thread(current_thread_id()).unwrap();
        assert!(after.user + after.system > before.user + before.system);
        assert!(cpus.iter().any(|c| c.cpu == after.cpu));
        assert!(thread(u32::MAX).is_err());
        assert!(ticks_per_second() > 0);
    }
}
