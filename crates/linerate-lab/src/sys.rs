//! The few syscalls std lacks: namespaces, mounts, packet-socket options, batched I/O, ethtool
//! ioctls and signal masks. Every `unsafe` block of the crate lives here, each with its reason.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

fn cpath(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

/// Moves the calling thread into a new, empty network namespace.
#[expect(unsafe_code)]
pub fn unshare_netns() -> io::Result<()> {
    // SAFETY: unshare only takes flags; CLONE_NEWNET affects the calling thread only.
    cvt(unsafe { libc::unshare(libc::CLONE_NEWNET) }).map(drop)
}

/// Moves the calling thread into the network namespace `ns` (an nsfs file descriptor).
#[expect(unsafe_code)]
pub fn setns_net(ns: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: the descriptor is valid for the call (borrowed); setns only reads it.
    cvt(unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) }).map(drop)
}

#[expect(unsafe_code)]
fn mount(src: &Path, dst: &Path, flags: libc::c_ulong) -> io::Result<()> {
    let src = cpath(src)?;
    let dst = cpath(dst)?;
    let fstype = c"none";
    // SAFETY: all pointers are NUL-terminated strings that outlive the call; data is NULL.
    cvt(unsafe {
        libc::mount(
            src.as_ptr(),
            dst.as_ptr(),
            fstype.as_ptr(),
            flags,
            std::ptr::null(),
        )
    })
    .map(drop)
}

/// Bind-mounts `src` onto `dst` (how a namespace gets a name under /run/netns).
pub fn bind_mount(src: &Path, dst: &Path) -> io::Result<()> {
    mount(src, dst, libc::MS_BIND)
}

/// Makes `dir` a shared mount point so namespace mounts under it propagate to other mount
/// namespaces, binding it onto itself first when it is not a mount point yet (as `ip netns`).
pub fn make_shared_mount(dir: &Path) -> io::Result<()> {
    match mount(Path::new(""), dir, libc::MS_SHARED | libc::MS_REC) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            mount(dir, dir, libc::MS_BIND | libc::MS_REC)?;
            mount(Path::new(""), dir, libc::MS_SHARED | libc::MS_REC)
        }
        other => other,
    }
}

/// Detaches the mount at `path`.
#[expect(unsafe_code)]
pub fn umount_detach(path: &Path) -> io::Result<()> {
    let p = cpath(path)?;
    // SAFETY: p is a NUL-terminated string that outlives the call.
    cvt(unsafe { libc::umount2(p.as_ptr(), libc::MNT_DETACH) }).map(drop)
}

/// Opens a socket with close-on-exec set.
#[expect(unsafe_code)]
pub fn socket(domain: libc::c_int, ty: libc::c_int, protocol: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: socket takes plain integers.
    let fd = cvt(unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, protocol) })?;
    // SAFETY: fd was just returned by socket() and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Sets a socket option from raw bytes.
#[expect(unsafe_code)]
pub fn setsockopt_bytes(
    fd: BorrowedFd<'_>,
    level: libc::c_int,
    name: libc::c_int,
    value: &[u8],
) -> io::Result<()> {
    let len = libc::socklen_t::try_from(value.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "socket option too long"))?;
    // SAFETY: value points to len readable bytes for the duration of the call.
    cvt(unsafe { libc::setsockopt(fd.as_raw_fd(), level, name, value.as_ptr().cast(), len) })
        .map(drop)
}

/// Sets an integer socket option.
pub fn setsockopt_int(
    fd: BorrowedFd<'_>,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    setsockopt_bytes(fd, level, name, &value.to_ne_bytes())
}

/// Binds a packet socket to one interface for all protocols.
#[expect(unsafe_code)]
pub fn bind_packet(fd: BorrowedFd<'_>, ifindex: u32) -> io::Result<()> {
    let ifindex = libc::c_int::try_from(ifindex)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface index too large"))?;
    // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
    let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    addr.sll_family = libc::AF_PACKET as libc::c_ushort;
    addr.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
    addr.sll_ifindex = ifindex;
    let len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
    // SAFETY: addr is a valid sockaddr_ll of the given length.
    cvt(unsafe { libc::bind(fd.as_raw_fd(), (&raw const addr).cast(), len) }).map(drop)
}

/// The index of interface `name` in the calling thread's namespace.
#[expect(unsafe_code)]
pub fn if_nametoindex(name: &str) -> io::Result<u32> {
    let c = CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface name has NUL"))?;
    // SAFETY: c is a NUL-terminated string that outlives the call.
    let idx = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if idx == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(idx)
    }
}

#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

#[repr(C)]
struct IfreqData {
    name: [u8; libc::IFNAMSIZ],
    data: *mut libc::c_void,
    _pad: [u8; 16],
}

/// Runs one ethtool "set" command taking a 0/1 value (e.g. ETHTOOL_STXCSUM) on `ifname`,
/// through an ioctl on `fd` (any socket in the interface's namespace).
#[expect(unsafe_code)]
pub fn ethtool_set(fd: BorrowedFd<'_>, ifname: &str, cmd: u32, value: u32) -> io::Result<()> {
    let mut name = [0u8; libc::IFNAMSIZ];
    if ifname.len() >= name.len() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "interface name too long",
        ));
    }
    name[..ifname.len()].copy_from_slice(ifname.as_bytes());
    let mut val = EthtoolValue { cmd, data: value };
    let mut req = IfreqData {
        name,
        data: (&raw mut val).cast(),
        _pad: [0; 16],
    };
    // SAFETY: req is a properly laid out struct ifreq whose data points at an ethtool_value
    // that lives until the call returns.
    cvt(unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCETHTOOL, &raw mut req) }).map(drop)
}

/// Waits until `fd` is readable or `timeout` passes (`None`: forever). Returns readability.
#[expect(unsafe_code)]
pub fn wait_readable(fd: BorrowedFd<'_>, timeout: Option<Duration>) -> io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = timeout.map(|t| libc::timespec {
        tv_sec: libc::time_t::try_from(t.as_secs()).unwrap_or(libc::time_t::MAX),
        tv_nsec: libc::c_long::from(t.subsec_nanos() as i32),
    });
    let tsp = ts.as_ref().map_or(std::ptr::null(), std::ptr::from_ref);
    // SAFETY: pfd and ts are valid for the call; sigmask is NULL (unchanged).
    let n = unsafe { libc::ppoll(&raw mut pfd, 1, tsp, std::ptr::null()) };
    match cvt(n) {
        Ok(n) => Ok(n > 0),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(false),
        Err(e) => Err(e),
    }
}

/// Fixed buffers for batched receive and send of frames on one socket.
pub struct Batch {
    bufs: Vec<Vec<u8>>,
    lens: Vec<usize>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
}

impl Batch {
    /// `slots` buffers of `slot_size` bytes each.
    pub fn new(slots: usize, slot_size: usize) -> Self {
        Batch {
            bufs: vec![vec![0u8; slot_size]; slots],
            lens: vec![0; slots],
            iovs: Vec::with_capacity(slots),
            hdrs: Vec::with_capacity(slots),
        }
    }

    /// Frame `i` of the last receive.
    pub fn frame(&self, i: usize) -> &[u8] {
        let len = self.lens[i].min(self.bufs[i].len());
        &self.bufs[i][..len]
    }

    /// Whether frame `i` of the last receive was longer than its slot.
    pub fn truncated(&self, i: usize) -> bool {
        self.lens[i] > self.bufs[i].len()
    }

    /// Receives up to one batch of frames without blocking. Returns how many arrived (0 when
    /// none was waiting).
    #[expect(unsafe_code)]
    pub fn recv(&mut self, fd: BorrowedFd<'_>) -> io::Result<usize> {
        self.iovs.clear();
        self.hdrs.clear();
        for buf in &mut self.bufs {
            self.iovs.push(libc::iovec {
                iov_base: buf.as_mut_ptr().cast(),
                iov_len: buf.len(),
            });
        }
        for iov in &mut self.iovs {
            // SAFETY: mmsghdr is plain old data; all-zero is valid.
            let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
            h.msg_hdr.msg_iov = std::ptr::from_mut(iov);
            h.msg_hdr.msg_iovlen = 1;
            self.hdrs.push(h);
        }
        let n = self.hdrs.len() as libc::c_uint;
        // SAFETY: every header points at one iovec that points into a live buffer owned by
        // self; none is moved or resized before the call returns.
        let got = unsafe {
            libc::recvmmsg(
                fd.as_raw_fd(),
                self.hdrs.as_mut_ptr(),
                n,
                libc::MSG_DONTWAIT | libc::MSG_TRUNC,
                std::ptr::null_mut(),
            )
        };
        match cvt(got) {
            Ok(got) => {
                let got = got as usize;
                for i in 0..got {
                    self.lens[i] = self.hdrs[i].msg_len as usize;
                }
                Ok(got)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(0),
            Err(e) => Err(e),
        }
    }
}

/// Sends `frames` with one sendmmsg call; returns how many the kernel took.
#[expect(unsafe_code)]
pub fn send_frames(fd: BorrowedFd<'_>, frames: &[&[u8]]) -> io::Result<usize> {
    let mut iovs: Vec<libc::iovec> = frames
        .iter()
        .map(|f| libc::iovec {
            iov_base: f.as_ptr().cast_mut().cast(),
            iov_len: f.len(),
        })
        .collect();
    let mut hdrs: Vec<libc::mmsghdr> = iovs
        .iter_mut()
        .map(|iov| {
            // SAFETY: mmsghdr is plain old data; all-zero is valid.
            let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
            h.msg_hdr.msg_iov = std::ptr::from_mut(iov);
            h.msg_hdr.msg_iovlen = 1;
            h
        })
        .collect();
    // SAFETY: headers point at iovecs that point at the caller's frames; the kernel only
    // reads them (sendmmsg), and all outlive the call.
    let n = unsafe { libc::sendmmsg(fd.as_raw_fd(), hdrs.as_mut_ptr(), hdrs.len() as _, 0) };
    cvt(n).map(|n| n as usize)
}

/// Signals that interrupt `lab up` (Ctrl-C, kill, hang-up).
pub const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

#[expect(unsafe_code)]
fn sigset(signals: &[libc::c_int]) -> libc::sigset_t {
    // SAFETY: sigset_t is plain old data; sigemptyset initialises it before use.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: set is a valid sigset_t.
    unsafe { libc::sigemptyset(&raw mut set) };
    for &s in signals {
        // SAFETY: set is a valid, initialised sigset_t.
        unsafe { libc::sigaddset(&raw mut set, s) };
    }
    set
}

/// Blocks (`true`) or unblocks (`false`) `signals` for the calling thread (and threads and
/// processes it starts afterwards).
#[expect(unsafe_code)]
pub fn mask_signals(signals: &[libc::c_int], block: bool) {
    let set = sigset(signals);
    let how = if block {
        libc::SIG_BLOCK
    } else {
        libc::SIG_UNBLOCK
    };
    // SAFETY: set is a valid sigset_t; the old mask is not needed.
    unsafe { libc::pthread_sigmask(how, &raw const set, std::ptr::null_mut()) };
}

/// Takes one pending (blocked) signal among `signals`, if any, without waiting.
#[expect(unsafe_code)]
pub fn take_pending_signal(signals: &[libc::c_int]) -> Option<libc::c_int> {
    let set = sigset(signals);
    let zero = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: set and zero are valid; no siginfo is requested.
    let sig = unsafe { libc::sigtimedwait(&raw const set, std::ptr::null_mut(), &raw const zero) };
    (sig > 0).then_some(sig)
}

/// Sends `signal` to process `pid`.
#[expect(unsafe_code)]
pub fn kill(pid: i32, signal: libc::c_int) -> io::Result<()> {
    // SAFETY: kill takes plain integers.
    cvt(unsafe { libc::kill(pid, signal) }).map(drop)
}

/// The effective user id.
#[expect(unsafe_code)]
pub fn euid() -> u32 {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() }
}

/// Lowers the calling thread's timer slack so short sleeps wake on time.
#[expect(unsafe_code)]
pub fn set_timer_slack_ns(ns: u64) {
    // SAFETY: prctl with PR_SET_TIMERSLACK takes an integer argument.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong) };
}

/// Connects a netlink socket to the kernel so plain read/write work on it.
#[expect(unsafe_code)]
pub fn connect_netlink_kernel(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: sockaddr_nl is plain old data; all-zero (pid 0 = the kernel) is valid.
    let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    let len = std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t;
    // SAFETY: addr is a valid sockaddr_nl of the given length.
    cvt(unsafe { libc::connect(fd.as_raw_fd(), (&raw const addr).cast(), len) }).map(drop)
}

/// Reads (and resets) a packet socket's kernel counters: (frames received, frames dropped
/// because the socket's receive buffer was full).
#[expect(unsafe_code)]
pub fn packet_statistics(fd: BorrowedFd<'_>) -> io::Result<(u32, u32)> {
    const SOL_PACKET: libc::c_int = 263;
    const PACKET_STATISTICS: libc::c_int = 6;
    let mut stats = [0u32; 2];
    let mut len = std::mem::size_of_val(&stats) as libc::socklen_t;
    // SAFETY: stats is a writable struct tpacket_stats (two u32) of len bytes.
    cvt(unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            SOL_PACKET,
            PACKET_STATISTICS,
            stats.as_mut_ptr().cast(),
            &raw mut len,
        )
    })?;
    Ok((stats[0], stats[1]))
}

/// Gives the calling (single-threaded) process a private mount namespace with /sys remounted,
/// so /sys/class/net shows the network namespace it just entered (as `ip netns exec` does).
#[expect(unsafe_code)]
pub fn remount_sys_for_current_netns() -> io::Result<()> {
    // SAFETY: unshare takes flags only.
    cvt(unsafe { libc::unshare(libc::CLONE_NEWNS) })?;
    let none = c"none";
    let root = c"/";
    let sys = c"/sys";
    let sysfs = c"sysfs";
    // SAFETY: NUL-terminated literals; data is NULL.
    cvt(unsafe {
        libc::mount(
            none.as_ptr(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_SLAVE | libc::MS_REC,
            std::ptr::null(),
        )
    })?;
    // SAFETY: as above.
    cvt(unsafe { libc::umount2(sys.as_ptr(), libc::MNT_DETACH) })?;
    // SAFETY: as above.
    cvt(unsafe {
        libc::mount(
            sysfs.as_ptr(),
            sys.as_ptr(),
            sysfs.as_ptr(),
            0,
            std::ptr::null(),
        )
    })
    .map(drop)
}

/// Whether the process runs as root.
pub fn is_root() -> bool {
    euid() == 0
}

/// A blocked set of stop signals; dropping it restores the mask that was in force before.
pub struct StopSignalsBlocked {
    old: libc::sigset_t,
}

impl StopSignalsBlocked {
    /// Blocks [`STOP_SIGNALS`] for the calling thread until the guard is dropped.
    #[expect(unsafe_code)]
    pub fn new() -> StopSignalsBlocked {
        let set = sigset(&STOP_SIGNALS);
        // SAFETY: sigset_t is plain old data; pthread_sigmask fills it.
        let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: set and old are valid sigset_t values.
        unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &raw const set, &raw mut old) };
        StopSignalsBlocked { old }
    }
}

impl Drop for StopSignalsBlocked {
    #[expect(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: old is the mask saved by pthread_sigmask.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &raw const self.old, std::ptr::null_mut())
        };
    }
}
