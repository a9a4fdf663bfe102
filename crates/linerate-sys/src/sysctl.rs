//! FreeBSD sysctls. The codec (kinds, flags, values as the bytes `sysctl(3)` moves and as the
//! text `sysctl(8)` shows) is compiled on every OS, so it is tested on Linux too and a fake
//! sysctl backend can use it; the calls themselves (`sysctlbyname`, the `oidfmt`, `name` and
//! `next` queries of the `sysctl.*` meta-MIB that `sysctl(8)` uses) exist on FreeBSD only.
//!
//! Facts from FreeBSD's `<sys/sysctl.h>`: the kind word of a MIB holds its type in the low four
//! bits (`CTLTYPE_*`) and its flags above (`CTLFLAG_RD` 0x80000000, `CTLFLAG_WR` 0x40000000,
//! `CTLFLAG_TUN` 0x00080000 for a loader tunable, `CTLFLAG_VNET` 0x00020000 for a per-vnet
//! value). Numbers travel in native byte order; a MIB may hold an array of them (`kern.cp_time`),
//! which `sysctl(8)` prints separated by spaces. Strings travel with a trailing NUL on reads;
//! `sysctl(8)` writes them without one.

use std::fmt;

#[cfg(target_os = "freebsd")]
mod freebsd;

#[cfg(target_os = "freebsd")]
pub use freebsd::{dump, get, info, names_under, read_raw, set, write_raw};

/// `CTLFLAG_RD`: the value can be read.
pub const FLAG_RD: u32 = 0x8000_0000;
/// `CTLFLAG_WR`: the value can be written at run time.
pub const FLAG_WR: u32 = 0x4000_0000;
/// `CTLFLAG_TUN`: the value is also a loader tunable (read from the kernel environment at boot).
pub const FLAG_TUN: u32 = 0x0008_0000;
/// `CTLFLAG_VNET`: one value per virtual network stack (jail with `vnet`).
pub const FLAG_VNET: u32 = 0x0002_0000;
/// `CTLTYPE`: the bits of the kind word that hold the type.
const TYPE_MASK: u32 = 0xf;

/// The type of a MIB (`CTLTYPE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `CTLTYPE_NODE`: has children, no value of its own (or an opaque handler's table).
    Node,
    /// `CTLTYPE_INT`: C `int`.
    Int,
    /// `CTLTYPE_STRING`: NUL-terminated text.
    String,
    /// `CTLTYPE_S64`: `int64_t`.
    S64,
    /// `CTLTYPE_OPAQUE` / `CTLTYPE_STRUCT`: a C structure.
    Opaque,
    /// `CTLTYPE_UINT`: C `unsigned int`.
    Uint,
    /// `CTLTYPE_LONG`: C `long`.
    Long,
    /// `CTLTYPE_ULONG`: C `unsigned long`.
    Ulong,
    /// `CTLTYPE_U64`: `uint64_t`.
    U64,
    /// `CTLTYPE_U8`.
    U8,
    /// `CTLTYPE_U16`.
    U16,
    /// `CTLTYPE_S8`.
    S8,
    /// `CTLTYPE_S16`.
    S16,
    /// `CTLTYPE_S32`.
    S32,
    /// `CTLTYPE_U32`.
    U32,
}

/// Bytes in a C `long` of the OS the value comes from (FreeBSD's LP64 on 64-bit targets).
const LONG_BYTES: usize = std::mem::size_of::<libc::c_long>();

impl Kind {
    /// The kind for a `CTLTYPE_*` number.
    pub fn from_type(t: u32) -> Option<Kind> {
        Some(match t {
            1 => Kind::Node,
            2 => Kind::Int,
            3 => Kind::String,
            4 => Kind::S64,
            5 => Kind::Opaque,
            6 => Kind::Uint,
            7 => Kind::Long,
            8 => Kind::Ulong,
            9 => Kind::U64,
            0xa => Kind::U8,
            0xb => Kind::U16,
            0xc => Kind::S8,
            0xd => Kind::S16,
            0xe => Kind::S32,
            0xf => Kind::U32,
            _ => return None,
        })
    }

    /// Bytes of one number of this kind; `None` for nodes, strings and structures.
    pub fn width(self) -> Option<usize> {
        match self {
            Kind::U8 | Kind::S8 => Some(1),
            Kind::U16 | Kind::S16 => Some(2),
            Kind::Int | Kind::Uint | Kind::S32 | Kind::U32 => Some(4),
            Kind::S64 | Kind::U64 => Some(8),
            Kind::Long | Kind::Ulong => Some(LONG_BYTES),
            Kind::Node | Kind::String | Kind::Opaque => None,
        }
    }

    /// Whether numbers of this kind are signed.
    pub fn signed(self) -> bool {
        matches!(
            self,
            Kind::Int | Kind::S64 | Kind::Long | Kind::S8 | Kind::S16 | Kind::S32
        )
    }

    /// The C type, as error messages name it.
    pub fn c_name(self) -> &'static str {
        match self {
            Kind::Node => "node",
            Kind::Int => "int",
            Kind::String => "string",
            Kind::S64 => "int64_t",
            Kind::Opaque => "opaque",
            Kind::Uint => "unsigned int",
            Kind::Long => "long",
            Kind::Ulong => "unsigned long",
            Kind::U64 => "uint64_t",
            Kind::U8 => "uint8_t",
            Kind::U16 => "uint16_t",
            Kind::S8 => "int8_t",
            Kind::S16 => "int16_t",
            Kind::S32 => "int32_t",
            Kind::U32 => "uint32_t",
        }
    }

    /// The smallest and largest number this kind holds.
    fn range(self) -> (i128, i128) {
        let bits = self.width().unwrap_or(8) * 8;
        if self.signed() {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.c_name())
    }
}

/// What the kernel says about one MIB: its type, flags and format string (`I`, `IU`, `LU`, `A`,
/// `S,clockinfo`, `IK` for deci-Kelvin …), the answer of the `oidfmt` query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidInfo {
    /// The type.
    pub kind: Kind,
    /// The whole kind word (type bits included), for the `FLAG_*` tests.
    pub flags: u32,
    /// The format string.
    pub format: String,
}

impl OidInfo {
    /// Builds the description from a kind word and a format string; `None` when the type bits
    /// name no type.
    pub fn new(kind_word: u32, format: &str) -> Option<OidInfo> {
        Some(OidInfo {
            kind: Kind::from_type(kind_word & TYPE_MASK)?,
            flags: kind_word,
            format: format.to_owned(),
        })
    }

    /// Parses the answer of the `oidfmt` query: the kind word (native `u_int`), then the
    /// NUL-terminated format string.
    pub fn parse(answer: &[u8]) -> Option<OidInfo> {
        let word: [u8; 4] = answer.get(..4)?.try_into().ok()?;
        let rest = &answer[4..];
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        let format = std::str::from_utf8(&rest[..end]).ok()?;
        OidInfo::new(u32::from_ne_bytes(word), format)
    }

    /// Whether the value can be written at run time (`CTLFLAG_WR`).
    pub fn writable(&self) -> bool {
        self.flags & FLAG_WR != 0
    }

    /// Whether the value is a loader tunable (`CTLFLAG_TUN`): set in `/boot/loader.conf` and
    /// read at boot; without [`OidInfo::writable`] it changes only with a reboot.
    pub fn tunable(&self) -> bool {
        self.flags & FLAG_TUN != 0
    }

    /// Whether each vnet jail has its own value (`CTLFLAG_VNET`).
    pub fn per_vnet(&self) -> bool {
        self.flags & FLAG_VNET != 0
    }
}

/// A value that cannot be turned into text, or text that cannot be turned into a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// A node has no value of its own.
    #[error("a node, not a value")]
    Node,
    /// A structure (`S,clockinfo`, …): neither a number nor a string.
    #[error("an opaque structure (format {format}), not a number or a string")]
    Opaque {
        /// Its format string.
        format: String,
    },
    /// The bytes are not a whole number of elements.
    #[error("{len} bytes are not a whole number of {kind} values")]
    Ragged {
        /// The type.
        kind: Kind,
        /// Bytes received.
        len: usize,
    },
    /// A string value that is not UTF-8 or a string to write that holds a NUL.
    #[error("{0}")]
    BadText(String),
    /// Text that is not a number of the MIB's type.
    #[error("`{text}` is not a number (the setting is an {kind})")]
    NotANumber {
        /// The offending word.
        text: String,
        /// The type.
        kind: Kind,
    },
    /// A number beyond what the type holds.
    #[error("{text} is out of range for an {kind} ({min} to {max})")]
    OutOfRange {
        /// The offending word.
        text: String,
        /// The type.
        kind: Kind,
        /// Smallest allowed.
        min: i128,
        /// Largest allowed.
        max: i128,
    },
    /// No number at all.
    #[error("an empty value (the setting is an {kind})")]
    Empty {
        /// The type.
        kind: Kind,
    },
}

/// The value as `sysctl(8)` prints it with `-n`: numbers in decimal (several separated by a
/// space), strings without their NUL. Formats that `sysctl(8)` converts for display (`IK`
/// temperatures) stay raw numbers here: this is the value that is written back.
pub fn decode(info: &OidInfo, bytes: &[u8]) -> Result<String, ValueError> {
    match info.kind {
        Kind::Node => Err(ValueError::Node),
        Kind::Opaque => Err(ValueError::Opaque {
            format: info.format.clone(),
        }),
        Kind::String => {
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            String::from_utf8(bytes[..end].to_vec())
                .map_err(|_| ValueError::BadText("a string that is not UTF-8".into()))
        }
        kind => {
            let width = kind.width().unwrap_or(1);
            if bytes.len() % width != 0 {
                return Err(ValueError::Ragged {
                    kind,
                    len: bytes.len(),
                });
            }
            let words: Vec<String> = bytes
                .chunks_exact(width)
                .map(|c| number_of(kind, c).to_string())
                .collect();
            Ok(words.join(" "))
        }
    }
}

/// One number from its native-order bytes (`chunk` is exactly the kind's width).
fn number_of(kind: Kind, chunk: &[u8]) -> i128 {
    let mut raw = [0u8; 8];
    raw[..chunk.len()].copy_from_slice(chunk);
    // Native order: little-endian puts the value in the low bytes, big-endian in the high.
    let unsigned: u64 = if cfg!(target_endian = "little") {
        u64::from_le_bytes(raw)
    } else {
        u64::from_be_bytes(raw) >> (64 - 8 * chunk.len())
    };
    if kind.signed() {
        let shift = 64 - 8 * chunk.len() as u32;
        i128::from(((unsigned << shift) as i64) >> shift)
    } else {
        i128::from(unsigned)
    }
}

/// The bytes `sysctl(3)` takes for `text`: numbers (decimal or `0x` hex, several separated by
/// spaces or commas for an array) in the MIB's width, or a string without its NUL.
pub fn encode(info: &OidInfo, text: &str) -> Result<Vec<u8>, ValueError> {
    match info.kind {
        Kind::Node => Err(ValueError::Node),
        Kind::Opaque => Err(ValueError::Opaque {
            format: info.format.clone(),
        }),
        Kind::String => {
            if text.contains('\0') {
                return Err(ValueError::BadText("a string with a NUL byte".into()));
            }
            Ok(text.as_bytes().to_vec())
        }
        kind => {
            let width = kind.width().unwrap_or(1);
            let (min, max) = kind.range();
            let mut out = Vec::new();
            let words = text
                .split(|c: char| c.is_whitespace() || c == ',')
                .filter(|w| !w.is_empty());
            for word in words {
                let n = parse_number(word).ok_or_else(|| ValueError::NotANumber {
                    text: word.to_owned(),
                    kind,
                })?;
                if n < min || n > max {
                    return Err(ValueError::OutOfRange {
                        text: word.to_owned(),
                        kind,
                        min,
                        max,
                    });
                }
                // In range, so the low `width` bytes of the two's complement are the value.
                let bytes = (n as i64).to_ne_bytes();
                if cfg!(target_endian = "little") {
                    out.extend_from_slice(&bytes[..width]);
                } else {
                    out.extend_from_slice(&bytes[8 - width..]);
                }
            }
            if out.is_empty() {
                return Err(ValueError::Empty { kind });
            }
            Ok(out)
        }
    }
}

/// Decimal (with an optional sign) or `0x` hex.
fn parse_number(word: &str) -> Option<i128> {
    let (negative, digits) = match word.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, word.strip_prefix('+').unwrap_or(word)),
    };
    let magnitude = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) if !hex.is_empty() => i128::from_str_radix(hex, 16).ok()?,
        Some(_) => return None,
        None if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            digits.parse::<i128>().ok()?
        }
        None => return None,
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// One leaf of a subtree dump: its name, and its value or why it could not be read.
pub type DumpEntry = (String, Result<String, SysctlError>);

/// A sysctl that could not be read or written: the MIB name and why.
#[derive(Debug, thiserror::Error)]
pub enum SysctlError {
    /// The system call failed (`ENOENT`: no such MIB; `EPERM`: not root or read-only;
    /// `EINVAL`: the handler refused the value).
    #[error("{name}: {source}")]
    Os {
        /// The MIB.
        name: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The value could not be decoded or the text encoded.
    #[error("{name}: {source}")]
    Value {
        /// The MIB.
        name: String,
        /// What is wrong with it.
        source: ValueError,
    },
}

impl SysctlError {
    /// The OS error number, when the system call failed.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            SysctlError::Os { source, .. } => source.raw_os_error(),
            SysctlError::Value { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(kind_word: u32, format: &str) -> OidInfo {
        OidInfo::new(kind_word, format).unwrap()
    }

    #[test]
    fn the_oidfmt_answer_gives_kind_flags_and_format() {
        // kern.ipc.maxsockbuf: CTLTYPE_ULONG | CTLFLAG_RW (sysctl -t says "unsigned long").
        let mut answer = (FLAG_RD | FLAG_WR | 8).to_ne_bytes().to_vec();
        answer.extend_from_slice(b"LU\0");
        let i = OidInfo::parse(&answer).unwrap();
        assert_eq!((i.kind, i.format.as_str()), (Kind::Ulong, "LU"));
        assert!(i.writable() && !i.tunable() && !i.per_vnet());
        // kern.ipc.nmbclusters is CTLFLAG_RWTUN; hw.ix.num_queues is CTLFLAG_RDTUN.
        let rdtun = info(FLAG_RD | FLAG_TUN | 2, "I");
        assert!(rdtun.tunable() && !rdtun.writable());
        assert_eq!(OidInfo::parse(&[1, 2]), None);
        assert_eq!(OidInfo::new(FLAG_RD, "I"), None, "type 0 names no type");
    }

    #[test]
    fn numbers_decode_in_their_width_and_sign() {
        let int = info(FLAG_RD | 2, "I");
        assert_eq!(decode(&int, &(-5i32).to_ne_bytes()).unwrap(), "-5");
        let uint = info(FLAG_RD | 6, "IU");
        assert_eq!(
            decode(&uint, &u32::MAX.to_ne_bytes()).unwrap(),
            "4294967295"
        );
        let u64k = info(FLAG_RD | 9, "QU");
        assert_eq!(
            decode(&u64k, &u64::MAX.to_ne_bytes()).unwrap(),
            "18446744073709551615"
        );
        let s8 = info(FLAG_RD | 0xc, "C");
        assert_eq!(decode(&s8, &[0xff]).unwrap(), "-1");
        let u16k = info(FLAG_RD | 0xb, "SU");
        assert_eq!(decode(&u16k, &9000u16.to_ne_bytes()).unwrap(), "9000");
        // kern.cp_time: an array of longs, printed separated by spaces.
        let long = info(FLAG_RD | 7, "L");
        let mut arr = 7i64.to_ne_bytes().to_vec();
        arr.extend_from_slice(&(-2i64).to_ne_bytes());
        assert_eq!(decode(&long, &arr).unwrap(), "7 -2");
        assert_eq!(decode(&int, &[]).unwrap(), "", "an empty array");
        assert!(matches!(
            decode(&int, &[1, 2, 3]),
            Err(ValueError::Ragged { len: 3, .. })
        ));
    }

    #[test]
    fn strings_lose_their_nul_and_structures_are_refused() {
        let s = info(FLAG_RD | FLAG_WR | 3, "A");
        assert_eq!(decode(&s, b"cubic\0").unwrap(), "cubic");
        assert_eq!(decode(&s, b"no-nul").unwrap(), "no-nul");
        assert!(decode(&s, &[0xff, 0xfe, 0]).is_err());
        let st = info(FLAG_RD | 5, "S,clockinfo");
        let e = decode(&st, &[0; 20]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "an opaque structure (format S,clockinfo), not a number or a string"
        );
        assert_eq!(decode(&info(1, "N"), &[]), Err(ValueError::Node));
    }

    #[test]
    fn text_encodes_back_to_the_same_bytes() {
        for (word, fmt, text) in [
            (2u32, "I", "-7"),
            (6, "IU", "4294967295"),
            (7, "L", "-9223372036854775808"),
            (8, "LU", "2097152"),
            (9, "QU", "18446744073709551615"),
            (0xa, "CU", "255"),
            (0xd, "S", "-32768"),
            (0xe, "I", "2147483647"),
            (0xf, "IU", "0"),
        ] {
            let i = info(FLAG_RD | FLAG_WR | word, fmt);
            let bytes = encode(&i, text).unwrap();
            assert_eq!(bytes.len(), i.kind.width().unwrap(), "{text}");
            assert_eq!(decode(&i, &bytes).unwrap(), text, "{:?}", i.kind);
        }
        let int = info(FLAG_RD | FLAG_WR | 2, "I");
        assert_eq!(encode(&int, "0x10").unwrap(), 16i32.to_ne_bytes());
        assert_eq!(
            decode(&int, &encode(&int, "1, 2 3").unwrap()).unwrap(),
            "1 2 3"
        );
        let s = info(FLAG_RD | FLAG_WR | 3, "A");
        assert_eq!(encode(&s, "htcp").unwrap(), b"htcp");
    }

    #[test]
    fn bad_text_is_refused_with_the_word_and_the_range() {
        let uint = info(FLAG_RD | FLAG_WR | 6, "IU");
        assert_eq!(
            encode(&uint, "-1").unwrap_err().to_string(),
            "-1 is out of range for an unsigned int (0 to 4294967295)"
        );
        assert_eq!(
            encode(&uint, "16M").unwrap_err().to_string(),
            "`16M` is not a number (the setting is an unsigned int)"
        );
        assert!(matches!(encode(&uint, "  "), Err(ValueError::Empty { .. })));
        assert!(encode(&uint, "0x").is_err());
        assert!(encode(&uint, "1.5").is_err());
        let u8k = info(FLAG_RD | FLAG_WR | 0xa, "CU");
        assert!(matches!(
            encode(&u8k, "256"),
            Err(ValueError::OutOfRange { max: 255, .. })
        ));
        let s = info(FLAG_RD | FLAG_WR | 3, "A");
        assert!(encode(&s, "a\0b").is_err());
        assert!(encode(&info(5, "S,x"), "1").is_err());
    }
}
