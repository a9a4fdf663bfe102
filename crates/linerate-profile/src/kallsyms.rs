//! Kernel symbols from `/proc/kallsyms`: the text symbols sorted by address, looked up by
//! binary search (the symbol at or below an address).

/// The kernel's text symbols, sorted by address.
#[derive(Debug, Default)]
pub struct Kallsyms {
    syms: Vec<(u64, String)>,
}

impl Kallsyms {
    /// Parses the text of `/proc/kallsyms` (`ADDR TYPE NAME [MODULE]` per line). Only text
    /// symbols (types `t`/`T`, and weak `w`/`W`) are kept; zero addresses (what an
    /// unprivileged reader sees under `kptr_restrict`) are dropped. Malformed lines are
    /// skipped: the file is the kernel's, not the user's.
    pub fn parse(text: &str) -> Kallsyms {
        let mut syms: Vec<(u64, String)> = text
            .lines()
            .filter_map(|line| {
                let mut it = line.split_whitespace();
                let addr = u64::from_str_radix(it.next()?, 16).ok()?;
                let kind = it.next()?;
                let name = it.next()?;
                if addr == 0 || !matches!(kind, "t" | "T" | "w" | "W") {
                    return None;
                }
                Some((addr, name.to_owned()))
            })
            .collect();
        syms.sort_by_key(|&(a, _)| a);
        syms.dedup_by_key(|&mut (a, _)| a);
        Kallsyms { syms }
    }

    /// Reads `/proc/kallsyms` (empty when it cannot be read).
    pub fn load() -> Kallsyms {
        std::fs::read_to_string("/proc/kallsyms")
            .map(|t| Kallsyms::parse(&t))
            .unwrap_or_default()
    }

    /// How many text symbols are known (0: addresses hidden, run as root).
    pub fn len(&self) -> usize {
        self.syms.len()
    }

    /// The symbol containing `addr`: the last one starting at or below it.
    pub fn lookup(&self, addr: u64) -> Option<&str> {
        let i = self.syms.partition_point(|&(a, _)| a <= addr);
        let (_, name) = self.syms.get(i.checked_sub(1)?)?;
        Some(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
ffffffff81000000 T _stext
ffffffff81000100 t do_one_initcall
ffffffff81000200 D some_data
ffffffff81000300 T nft_do_chain\t[nf_tables]
0000000000000000 T hidden
garbage line
ffffffff81000050 W weak_fn
";

    #[test]
    fn parses_text_symbols_only_and_sorts() {
        let k = Kallsyms::parse(TEXT);
        assert_eq!(k.len(), 4);
        assert_eq!(k.lookup(0xffff_ffff_8100_0000), Some("_stext"));
        assert_eq!(k.lookup(0xffff_ffff_8100_004f), Some("_stext"));
        assert_eq!(k.lookup(0xffff_ffff_8100_0050), Some("weak_fn"));
        // the data symbol at 0x200 is not a function: the text symbol before it covers it
        assert_eq!(k.lookup(0xffff_ffff_8100_0250), Some("do_one_initcall"));
        assert_eq!(k.lookup(0xffff_ffff_8100_0301), Some("nft_do_chain"));
    }

    #[test]
    fn below_the_first_symbol_is_unknown() {
        let k = Kallsyms::parse(TEXT);
        assert_eq!(k.lookup(0x1000), None);
        assert_eq!(Kallsyms::parse("").lookup(0xffff_ffff_8100_0000), None);
    }

    #[test]
    fn hidden_addresses_leave_no_symbols() {
        let k = Kallsyms::parse("0000000000000000 T _stext\n0000000000000000 t foo\n");
        assert_eq!(k.len(), 0);
    }
}
