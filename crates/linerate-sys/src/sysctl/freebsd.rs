//! `sysctl(3)` on FreeBSD: values by name, their type and flags, and the names under a node,
//! through the same meta-MIB queries `sysctl(8)` makes (`{0, 4, …}` oidfmt, `{0, 1, …}` name,
//! `{0, 2, …}` next leaf). Hand-written: nix has no sysctl wrapper for FreeBSD and the crates
//! that wrap it add a dependency for five calls.

use std::ffi::CString;
use std::io;

use super::{DumpEntry, OidInfo, SysctlError, decode, encode};

/// `CTL_SYSCTL`, the meta-MIB, and its queries (`<sys/sysctl.h>`).
const CTL_SYSCTL: libc::c_int = 0;
const CTL_SYSCTL_NAME: libc::c_int = 1;
const CTL_SYSCTL_NEXT: libc::c_int = 2;
const CTL_SYSCTL_OIDFMT: libc::c_int = 4;
/// The most components a MIB has.
const CTL_MAXNAME: usize = 24;
/// How often a read retries when the value grew between the size query and the read.
const READ_TRIES: usize = 8;

fn os(name: &str, source: io::Error) -> SysctlError {
    SysctlError::Os {
        name: name.to_owned(),
        source,
    }
}

fn c_name(name: &str) -> io::Result<CString> {
    CString::new(name).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "a sysctl name cannot contain a NUL byte",
        )
    })
}

/// The numeric MIB of `name` (`sysctlnametomib(3)`).
#[expect(unsafe_code)]
fn mib_of(name: &str) -> io::Result<Vec<libc::c_int>> {
    let c = c_name(name)?;
    let mut mib = [0 as libc::c_int; CTL_MAXNAME];
    let mut len: libc::size_t = CTL_MAXNAME;
    // SAFETY: `c` is a NUL-terminated string alive for the call; `mib` has room for `len`
    // (CTL_MAXNAME) ints and the kernel writes at most that many, storing the count in `len`.
    let rc = unsafe { libc::sysctlnametomib(c.as_ptr(), mib.as_mut_ptr(), &raw mut len) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(mib[..len.min(CTL_MAXNAME)].to_vec())
}

/// `sysctl(3)` by MIB: the value's size first, then the value, retrying with a larger buffer
/// when it grew in between (`ENOMEM`).
#[expect(unsafe_code)]
fn read_mib(mib: &[libc::c_int]) -> io::Result<Vec<u8>> {
    let namelen = libc::c_uint::try_from(mib.len())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    let mut size: libc::size_t = 0;
    // SAFETY: `mib` holds `namelen` ints; a null old pointer asks only for the size, which the
    // kernel stores in `size`; no new value.
    let rc = unsafe {
        libc::sysctl(
            mib.as_ptr(),
            namelen,
            std::ptr::null_mut(),
            &raw mut size,
            std::ptr::null(),
            0,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    for _ in 0..READ_TRIES {
        // A margin: tables (sockets, processes) grow between the two calls.
        let mut buf = vec![0u8; size.saturating_add(size / 8).saturating_add(64)];
        let mut len: libc::size_t = buf.len();
        // SAFETY: `buf` is writable for `len` bytes; the kernel writes at most `len` bytes and
        // stores how many in `len`. `mib` as above; no new value.
        let rc = unsafe {
            libc::sysctl(
                mib.as_ptr(),
                namelen,
                buf.as_mut_ptr().cast(),
                &raw mut len,
                std::ptr::null(),
                0,
            )
        };
        if rc == 0 {
            buf.truncate(len.min(buf.len()));
            return Ok(buf);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ENOMEM) {
            return Err(e);
        }
        size = buf.len().saturating_mul(2);
    }
    Err(io::Error::from_raw_os_error(libc::ENOMEM))
}

/// `prefix` followed by `mib`: a meta-MIB query about `mib`.
fn meta(query: libc::c_int, mib: &[libc::c_int]) -> Vec<libc::c_int> {
    let mut q = vec![CTL_SYSCTL, query];
    q.extend_from_slice(mib);
    q
}

fn info_mib(mib: &[libc::c_int]) -> io::Result<OidInfo> {
    let answer = read_mib(&meta(CTL_SYSCTL_OIDFMT, mib))?;
    OidInfo::parse(&answer).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "the kernel's type description (oidfmt) is not one this FreeBSD version documents",
        )
    })
}

fn name_mib(mib: &[libc::c_int]) -> io::Result<String> {
    let bytes = read_mib(&meta(CTL_SYSCTL_NAME, mib))?;
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8(bytes[..end].to_vec())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a MIB name that is not UTF-8"))
}

/// The leaf after `mib` in the kernel's depth-first order (`None` after the last one).
fn next_mib(mib: &[libc::c_int]) -> io::Result<Option<Vec<libc::c_int>>> {
    match read_mib(&meta(CTL_SYSCTL_NEXT, mib)) {
        Ok(bytes) => Ok(Some(
            bytes
                .chunks_exact(std::mem::size_of::<libc::c_int>())
                .filter_map(|c| c.try_into().ok().map(libc::c_int::from_ne_bytes))
                .collect(),
        )),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The type, flags and format of `name`.
pub fn info(name: &str) -> Result<OidInfo, SysctlError> {
    mib_of(name)
        .and_then(|mib| info_mib(&mib))
        .map_err(|e| os(name, e))
}

/// The raw bytes of `name`.
pub fn read_raw(name: &str) -> Result<Vec<u8>, SysctlError> {
    mib_of(name)
        .and_then(|mib| read_mib(&mib))
        .map_err(|e| os(name, e))
}

/// Writes raw bytes to `name` (`sysctlbyname(3)` with a new value; needs root, and the MIB
/// must be writable at run time).
#[expect(unsafe_code)]
pub fn write_raw(name: &str, bytes: &[u8]) -> Result<(), SysctlError> {
    let c = c_name(name).map_err(|e| os(name, e))?;
    // SAFETY: `c` is NUL-terminated and alive for the call; no old value is asked for (null
    // pointers); the kernel reads `bytes.len()` bytes from `bytes`, which it does not keep.
    let rc = unsafe {
        libc::sysctlbyname(
            c.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            bytes.as_ptr().cast(),
            bytes.len(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(os(name, io::Error::last_os_error()))
    }
}

/// The value of `name` as `sysctl -n` prints it (see [`super::decode`]).
pub fn get(name: &str) -> Result<String, SysctlError> {
    let mib = mib_of(name).map_err(|e| os(name, e))?;
    let info = info_mib(&mib).map_err(|e| os(name, e))?;
    let bytes = read_mib(&mib).map_err(|e| os(name, e))?;
    decode(&info, &bytes).map_err(|source| SysctlError::Value {
        name: name.to_owned(),
        source,
    })
}

/// Sets `name` from text, encoded for its type (see [`super::encode`]).
pub fn set(name: &str, text: &str) -> Result<(), SysctlError> {
    let info = info(name)?;
    let bytes = encode(&info, text).map_err(|source| SysctlError::Value {
        name: name.to_owned(),
        source,
    })?;
    write_raw(name, &bytes)
}

/// The names of the leaves under `prefix` (a node such as `dev.ix.0` or `net.isr`), in the
/// kernel's order; `prefix` itself when it is a leaf. MIBs marked `CTLFLAG_SKIP` are left out,
/// as `sysctl -a` leaves them out.
pub fn names_under(prefix: &str) -> Result<Vec<String>, SysctlError> {
    let err = |e| os(prefix, e);
    let root = mib_of(prefix).map_err(err)?;
    let kind = info_mib(&root).map_err(err)?.kind;
    if kind != super::Kind::Node {
        return Ok(vec![prefix.to_owned()]);
    }
    let mut names = Vec::new();
    let mut at = root.clone();
    while let Some(next) = next_mib(&at).map_err(err)? {
        if next.len() < root.len() || next[..root.len()] != root[..] {
            break;
        }
        names.push(name_mib(&next).map_err(err)?);
        at = next;
    }
    Ok(names)
}

/// Every leaf under `prefix` with its value, or why the value could not be read (structures,
/// MIBs that need privileges). Like `sysctl PREFIX` without `-o`.
pub fn dump(prefix: &str) -> Result<Vec<DumpEntry>, SysctlError> {
    Ok(names_under(prefix)?
        .into_iter()
        .map(|name| {
            let value = get(&name);
            (name, value)
        })
        .collect())
}

// These run on FreeBSD only (`cargo test` there); on Linux they are type-checked by the
// FreeBSD clippy step of CI.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysctl::Kind;

    #[test]
    fn reads_strings_numbers_and_types_like_sysctl_8() {
        assert_eq!(get("kern.ostype").unwrap(), "FreeBSD");
        let ncpu: u32 = get("hw.ncpu").unwrap().parse().unwrap();
        assert!(ncpu >= 1);
        assert_eq!(info("hw.ncpu").unwrap().kind, Kind::Int);
        assert_eq!(info("kern.ostype").unwrap().kind, Kind::String);
        let maxsockbuf = info("kern.ipc.maxsockbuf").unwrap();
        assert_eq!(maxsockbuf.kind, Kind::Ulong);
        assert!(maxsockbuf.writable());
        assert!(matches!(
            get("kern.clockrate"),
            Err(SysctlError::Value { .. })
        ));
        assert_eq!(
            get("net.inet.tcp.nonesuch").unwrap_err().raw_os_error(),
            Some(libc::ENOENT)
        );
    }

    #[test]
    fn a_subtree_lists_its_leaves_in_order() {
        let names = names_under("kern.smp").unwrap();
        assert!(names.iter().any(|n| n == "kern.smp.cpus"), "{names:?}");
        assert!(names.iter().all(|n| n.starts_with("kern.smp.")));
        assert_eq!(names_under("hw.ncpu").unwrap(), ["hw.ncpu"]);
        let values = dump("kern.smp").unwrap();
        assert_eq!(values.len(), names.len());
    }

    #[test]
    fn writing_the_current_value_back_round_trips_as_root() {
        if !crate::is_root() {
            eprintln!("SKIP: writing a sysctl needs root");
            return;
        }
        let name = "net.inet.tcp.sendspace";
        let now = get(name).unwrap();
        set(name, &now).unwrap();
        assert_eq!(get(name).unwrap(), now);
        assert!(matches!(set(name, "lots"), Err(SysctlError::Value { .. })));
        assert_eq!(
            set("kern.ostype", "Linux").unwrap_err().raw_os_error(),
            Some(libc::EPERM)
        );
    }
}
