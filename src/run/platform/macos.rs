//! macOS.

pub use super::absent::{
    become_subreaper, die_with_this_process, guard_this_process, reap_if_dead, start_watchdog,
    widen,
};

use std::path::Path;

use super::output_of;
use crate::run::facts::OsFacts;

/// `sw_vers`: the product's name and version; the Darwin kernel's release.
pub fn os_facts(_root: &Path) -> OsFacts {
    OsFacts {
        name: output_of("sw_vers", &["-productName"]),
        version: output_of("sw_vers", &["-productVersion"]),
        kernel: nix::sys::utsname::uname()
            .ok()
            .and_then(|u| u.release().to_str().map(str::to_owned)),
        libc: None,
    }
}

/// macOS runs no containers of its own: the run is on the machine.
pub fn container(_root: &Path) -> Option<Option<String>> {
    None
}

/// The platform's UUID (`ioreg -rd1 -c IOPlatformExpertDevice`).
pub fn machine_id(_root: &Path) -> Option<String> {
    let text = output_of("ioreg", &["-rd1", "-c", "IOPlatformExpertDevice"])?;
    text.lines()
        .find(|l| l.contains("IOPlatformUUID"))
        .and_then(|l| l.rsplit('"').nth(1))
        .map(str::to_owned)
}

/// The host's name.
pub fn hostname() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_default()
}

pub use super::unix::{
    SIGNALS_PROCESSES, Signals, adopt, executable_in, exit_code_of, isolate, release, set_args,
    shell_fallback, signal_group, signal_process, state_home,
};

use nix::libc;

use super::procargs::ProcArgs;
use crate::results::Leaked;

/// The live (non-zombie) members of process group `pgid`, with their command lines.
pub fn group_members(pgid: Option<u32>) -> Vec<Leaked> {
    let Some(pgid) = pgid else { return Vec::new() };
    // The common case, a group already gone, costs one syscall instead of a listing.
    if !super::unix::group_exists(pgid) {
        return Vec::new();
    }
    super::with_command_lines(all_pids().filter(|pid| {
        bsd_info(*pid).is_some_and(|i| i.pbi_pgid == pgid && i.pbi_status != libc::SZOMB)
    }))
}

/// Orphans are not adopted by the tool: escapers are found by their token alone.
pub const ADOPTS_ORPHANS: bool = false;

/// The processes a check may have left behind out of its group: this user's, adopted
/// by launchd (an orphan's parent), started since the tool started.
pub fn children() -> Vec<u32> {
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let since = bsd_info(std::process::id()).map_or(0, |i| i.pbi_start_tvsec);
    all_pids()
        .filter(|pid| {
            bsd_info(*pid)
                .is_some_and(|i| i.pbi_ppid == 1 && i.pbi_uid == uid && i.pbi_start_tvsec >= since)
        })
        .collect()
}

/// Every process id on the system (`proc_listallpids`).
pub fn all_pids() -> std::vec::IntoIter<u32> {
    let mut room = 1024usize;
    loop {
        let mut pids = vec![0 as libc::pid_t; room];
        let bytes = i32::try_from(room * size_of::<libc::pid_t>()).unwrap_or(i32::MAX);
        // SAFETY: the buffer holds as many bytes as said.
        let n = unsafe { libc::proc_listallpids(pids.as_mut_ptr().cast(), bytes) };
        let Ok(n) = usize::try_from(n) else {
            return Vec::new().into_iter();
        };
        if n < room || room >= 1 << 20 {
            pids.truncate(n.min(room));
            return pids
                .into_iter()
                .filter_map(|p| u32::try_from(p).ok().filter(|p| *p > 0))
                .collect::<Vec<_>>()
                .into_iter();
        }
        room *= 4;
    }
}

/// `proc_pidinfo(PROC_PIDTBSDINFO)`: parent, group, user, state, start.
fn bsd_info(pid: u32) -> Option<libc::proc_bsdinfo> {
    let pid = i32::try_from(pid).ok()?;
    // SAFETY: an all-integer structure, zeroed, filled by the kernel up to its size.
    unsafe {
        let mut info: libc::proc_bsdinfo = std::mem::zeroed();
        let size = size_of::<libc::proc_bsdinfo>() as i32;
        let n = libc::proc_pidinfo(pid, libc::PROC_PIDTBSDINFO, 0, (&raw mut info).cast(), size);
        (n == size).then_some(info)
    }
}

/// Whether `pid` exists and is not a zombie.
pub fn is_alive(pid: u32) -> bool {
    bsd_info(pid).is_some_and(|i| i.pbi_status != libc::SZOMB)
}

/// `sysctl(KERN_PROCARGS2)`: the process's arguments and environment (readable for
/// this user's processes).
fn proc_args(pid: u32) -> Option<ProcArgs> {
    let pid = i32::try_from(pid).ok()?;
    // SAFETY: sysctl reads into buffers whose sizes are given.
    unsafe {
        let mut max: libc::c_int = 0;
        let mut len = size_of::<libc::c_int>();
        let mut name = [libc::CTL_KERN, libc::KERN_ARGMAX];
        if libc::sysctl(
            name.as_mut_ptr(),
            2,
            (&raw mut max).cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        ) != 0
        {
            return None;
        }
        let mut buf = vec![0u8; usize::try_from(max).ok()?.min(4 << 20)];
        let mut len = buf.len();
        let mut name = [libc::CTL_KERN, libc::KERN_PROCARGS2, pid];
        if libc::sysctl(
            name.as_mut_ptr(),
            3,
            buf.as_mut_ptr().cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        ) != 0
        {
            return None;
        }
        buf.truncate(len);
        super::procargs::parse(&buf)
    }
}

/// The value of `name` in `pid`'s environment (this user's processes).
pub fn environ_var(pid: u32, name: &str) -> Option<String> {
    proc_args(pid)?.var(name).map(str::to_owned)
}

/// The command line of `pid`, arguments joined by spaces; else its program's path.
pub fn command_line(pid: u32) -> String {
    if let Some(args) = proc_args(pid).filter(|a| !a.args.is_empty()) {
        return args.args.join(" ");
    }
    let Ok(raw) = i32::try_from(pid) else {
        return "(exited)".to_owned();
    };
    let mut path = vec![0u8; 4096];
    // SAFETY: the buffer holds as many bytes as said.
    let n = unsafe { libc::proc_pidpath(raw, path.as_mut_ptr().cast(), path.len() as u32) };
    match usize::try_from(n) {
        Ok(n) if n > 0 => String::from_utf8_lossy(&path[..n]).into_owned(),
        _ => "(exited)".to_owned(),
    }
}
