//! User-space addresses as `module+offset`, from a process's `/proc/PID/maps` (read while
//! the process lives, cached per process).

use std::collections::HashMap;

/// One executable mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mapping {
    start: u64,
    end: u64,
    offset: u64,
    name: String,
}

/// The executable mappings of one process, sorted by start address.
#[derive(Debug, Default, Clone)]
pub struct Maps {
    maps: Vec<Mapping>,
}

impl Maps {
    /// Parses `/proc/PID/maps` text, keeping executable mappings with a name.
    pub fn parse(text: &str) -> Maps {
        let mut maps: Vec<Mapping> = text
            .lines()
            .filter_map(|line| {
                let mut it = line.split_whitespace();
                let (start, end) = it.next()?.split_once('-')?;
                let perms = it.next()?;
                let offset = u64::from_str_radix(it.next()?, 16).ok()?;
                let _dev = it.next()?;
                let _inode = it.next()?;
                let path = it.collect::<Vec<_>>().join(" ");
                if !perms.contains('x') || path.is_empty() {
                    return None;
                }
                let name = path.rsplit('/').next().unwrap_or(&path).to_owned();
                Some(Mapping {
                    start: u64::from_str_radix(start, 16).ok()?,
                    end: u64::from_str_radix(end, 16).ok()?,
                    offset,
                    name,
                })
            })
            .collect();
        maps.sort_by_key(|m| m.start);
        Maps { maps }
    }

    /// `module+0xOFFSET` for `addr` (the offset in the mapped file), or `[unknown]`.
    pub fn name(&self, addr: u64) -> String {
        let i = self.maps.partition_point(|m| m.start <= addr);
        match i.checked_sub(1).and_then(|i| self.maps.get(i)) {
            Some(m) if addr < m.end => format!("{}+{:#x}", m.name, addr - m.start + m.offset),
            _ => "[unknown]".to_owned(),
        }
    }
}

/// Per-process names and maps, read once per process.
#[derive(Debug, Default)]
pub struct Processes {
    seen: HashMap<u32, (String, Maps)>,
}

impl Processes {
    /// The process's command name and maps (`swapper` for pid 0; `[pid N]` once it is gone).
    pub fn get(&mut self, pid: u32) -> &(String, Maps) {
        self.seen.entry(pid).or_insert_with(|| {
            if pid == 0 {
                return ("swapper".to_owned(), Maps::default());
            }
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .map(|c| c.trim_end().to_owned())
                .unwrap_or_else(|_| format!("[pid {pid}]"));
            let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))
                .map(|t| Maps::parse(&t))
                .unwrap_or_default();
            (comm, maps)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_addresses_are_module_and_file_offset() {
        let m = Maps::parse(
            "5555555540000-555555558000 r--p 00000000 08:01 123 /usr/bin/dash\n\
             555555558000-55555556c000 r-xp 00004000 08:01 123 /usr/bin/dash\n\
             7ffff7dc0000-7ffff7f20000 r-xp 00026000 08:01 456 /usr/lib/x86_64-linux-gnu/libc.so.6\n\
             7ffff7ff0000-7ffff7ff2000 r-xp 00000000 00:00 0 [vdso]\n\
             7ffff7ff3000-7ffff7ff4000 rw-p 00000000 00:00 0\n",
        );
        assert_eq!(m.name(0x5555_5555_8010), "dash+0x4010");
        assert_eq!(m.name(0x7fff_f7dc_0100), "libc.so.6+0x26100");
        assert_eq!(m.name(0x7fff_f7ff_0010), "[vdso]+0x10");
        assert_eq!(m.name(0x7fff_f7ff_3000), "[unknown]");
        assert_eq!(m.name(0x10), "[unknown]");
    }
}
