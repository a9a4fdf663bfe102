//! User-space addresses named: the mapping from a process's `/proc/PID/maps` (read while the
//! process lives, cached per process), then the function from the mapped ELF file's symbol
//! tables (the `object` crate; Rust names demangled), else `module+0xOFFSET`.

use std::collections::HashMap;

/// One executable mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mapping {
    start: u64,
    end: u64,
    offset: u64,
    path: String,
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
                    path,
                    name,
                })
            })
            .collect();
        maps.sort_by_key(|m| m.start);
        Maps { maps }
    }

    /// The mapping holding `addr` and the offset of `addr` in its file.
    fn find(&self, addr: u64) -> Option<(&Mapping, u64)> {
        let i = self.maps.partition_point(|m| m.start <= addr);
        let m = self.maps.get(i.checked_sub(1)?)?;
        (addr < m.end).then(|| (m, addr - m.start + m.offset))
    }
}

/// Files larger than this are not read for their symbols (time and memory).
const MAX_ELF: u64 = 512 << 20;

/// The function symbols of one ELF file by virtual address, and its segments' file ranges.
#[derive(Debug, Default)]
pub struct Elf {
    /// (file offset, file size, virtual address) of each segment.
    segments: Vec<(u64, u64, u64)>,
    /// (address, size, raw name), sorted by address (names are demangled when looked up).
    syms: Vec<(u64, u64, String)>,
}

impl Elf {
    /// Reads the segments and the text symbols (`.symtab` and `.dynsym`) of an ELF image.
    pub fn parse(data: &[u8]) -> Option<Elf> {
        use object::{Object as _, ObjectSegment as _, ObjectSymbol as _, SymbolKind};
        let file = object::File::parse(data).ok()?;
        let segments = file
            .segments()
            .map(|s| {
                let (off, size) = s.file_range();
                (off, size, s.address())
            })
            .collect();
        let mut syms: Vec<(u64, u64, String)> = file
            .symbols()
            .chain(file.dynamic_symbols())
            .filter(|s| s.kind() == SymbolKind::Text && s.address() != 0)
            .filter_map(|s| {
                let name = s.name().ok()?;
                Some((
                    s.address(),
                    s.size(),
                    format!("{:#}", rustc_demangle::demangle(name)),
                ))
            })
            .collect();
        syms.sort_by_key(|s| s.0);
        syms.dedup_by_key(|s| s.0);
        Some(Elf { segments, syms })
    }

    /// The function at `file_offset` of the file (Rust names demangled).
    pub fn lookup(&self, file_offset: u64) -> Option<String> {
        let &(off, _, vaddr) = self
            .segments
            .iter()
            .find(|&&(o, size, _)| file_offset >= o && file_offset - o < size)?;
        let addr = vaddr + (file_offset - off);
        let i = self.syms.partition_point(|s| s.0 <= addr);
        let (start, size, name) = self.syms.get(i.checked_sub(1)?)?;
        if *size != 0 && addr - start >= *size {
            return None;
        }
        Some(format!("{:#}", rustc_demangle::demangle(name)))
    }
}

/// Per-process names and maps, read once per process; ELF symbols, read once per file.
#[derive(Debug, Default)]
pub struct Processes {
    seen: HashMap<u32, (String, Maps)>,
    files: HashMap<String, Option<Elf>>,
}

impl Processes {
    /// The process's command name (`swapper` for pid 0; `[pid N]` once it is gone).
    pub fn comm(&mut self, pid: u32) -> String {
        self.get(pid).0.clone()
    }

    /// The name of user address `addr` in process `pid`: its function where the file's
    /// symbols tell, else `module+0xOFFSET`, else `[unknown]`.
    pub fn user_frame(&mut self, pid: u32, addr: u64) -> String {
        self.get(pid);
        let Some((_, maps)) = self.seen.get(&pid) else {
            return "[unknown]".to_owned();
        };
        let Some((m, off)) = maps.find(addr) else {
            return "[unknown]".to_owned();
        };
        let elf = self.files.entry(m.path.clone()).or_insert_with(|| {
            if !m.path.starts_with('/') {
                return None; // [vdso], [anon:…]
            }
            // Through the process's root while it lives (it may be in another mount
            // namespace), else the path as seen here.
            let inside = format!("/proc/{pid}/root{}", m.path);
            [inside.as_str(), m.path.as_str()]
                .into_iter()
                .find_map(|path| {
                    let small = std::fs::metadata(path).is_ok_and(|md| md.len() <= MAX_ELF);
                    small
                        .then(|| std::fs::read(path).ok())
                        .flatten()
                        .and_then(|data| Elf::parse(&data))
                })
        });
        match elf.as_ref().and_then(|e| e.lookup(off)) {
            Some(name) => name,
            None => format!("{}+{off:#x}", m.name),
        }
    }

    /// Reads the process's name and maps now, while it lives (symbols are read later).
    pub fn note(&mut self, pid: u32) {
        self.get(pid);
    }

    /// The process's command name and maps.
    fn get(&mut self, pid: u32) -> &(String, Maps) {
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

    /// `module+0xOFFSET` for `addr`, as a frame without symbols is named.
    fn name(m: &Maps, addr: u64) -> String {
        match m.find(addr) {
            Some((m, off)) => format!("{}+{off:#x}", m.name),
            None => "[unknown]".to_owned(),
        }
    }

    #[test]
    fn user_addresses_are_module_and_file_offset() {
        let m = Maps::parse(
            "5555555540000-555555558000 r--p 00000000 08:01 123 /usr/bin/dash\n\
             555555558000-55555556c000 r-xp 00004000 08:01 123 /usr/bin/dash\n\
             7ffff7dc0000-7ffff7f20000 r-xp 00026000 08:01 456 /usr/lib/x86_64-linux-gnu/libc.so.6\n\
             7ffff7ff0000-7ffff7ff2000 r-xp 00000000 00:00 0 [vdso]\n\
             7ffff7ff3000-7ffff7ff4000 rw-p 00000000 00:00 0\n",
        );
        assert_eq!(name(&m, 0x5555_5555_8010), "dash+0x4010");
        assert_eq!(name(&m, 0x7fff_f7dc_0100), "libc.so.6+0x26100");
        assert_eq!(name(&m, 0x7fff_f7ff_0010), "[vdso]+0x10");
        assert_eq!(name(&m, 0x7fff_f7ff_3000), "[unknown]");
        assert_eq!(name(&m, 0x10), "[unknown]");
    }

    #[test]
    fn functions_of_this_test_binary_are_named() {
        // This test binary has a symbol table: the address of a function of it, through the
        // maps of this very process, resolves to that function's demangled name.
        let mut procs = Processes::default();
        let addr = functions_of_this_test_binary_are_named as fn() as usize as u64;
        let name = procs.user_frame(std::process::id(), addr);
        assert!(
            name.contains("functions_of_this_test_binary_are_named"),
            "{name}"
        );
        assert_eq!(procs.user_frame(std::process::id(), 0x10), "[unknown]");
    }
}
