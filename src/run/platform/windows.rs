//! Windows.

// A job does the watchdog's and the subreaper's work: it dies with the tool, and
// nothing a check starts can leave it.
pub use super::absent::{
    all_pids, become_subreaper, children, die_with_this_process, environ_var, guard_this_process,
    is_alive, reap_if_dead, start_watchdog, widen,
};

use std::path::Path;

use super::output_of;
use crate::run::facts::OsFacts;

/// A value of the registry key `key` (`reg query`'s `NAME  REG_SZ  VALUE` line).
fn registry(key: &str, name: &str) -> Option<String> {
    let text = output_of("reg", &["query", key, "/v", name])?;
    text.lines().find_map(|l| {
        let mut parts = l.split_whitespace();
        (parts.next()? == name).then(|| parts.skip(1).collect::<Vec<_>>().join(" "))
    })
}

const CURRENT_VERSION: &str = r"HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion";

/// The product's name and its build (`10.0.20348.2849`).
pub fn os_facts(_root: &Path) -> OsFacts {
    let build = registry(CURRENT_VERSION, "CurrentBuild");
    let ubr = registry(CURRENT_VERSION, "UBR")
        .and_then(|u| u64::from_str_radix(u.trim_start_matches("0x"), 16).ok());
    let version = build.map(|b| match ubr {
        Some(ubr) => format!("10.0.{b}.{ubr}"),
        None => format!("10.0.{b}"),
    });
    OsFacts {
        name: registry(CURRENT_VERSION, "ProductName"),
        version,
        kernel: None,
        libc: None,
    }
}

/// A Windows container runs its processes as `ContainerAdministrator` or
/// `ContainerUser`.
pub fn container(_root: &Path) -> Option<Option<String>> {
    let user = std::env::var("USERNAME").unwrap_or_default();
    matches!(user.as_str(), "ContainerAdministrator" | "ContainerUser")
        .then(|| Some("windows".to_owned()))
}

/// The machine's `MachineGuid`.
pub fn machine_id(_root: &Path) -> Option<String> {
    registry(r"HKLM\SOFTWARE\Microsoft\Cryptography", "MachineGuid")
}

/// The computer's name.
pub fn hostname() -> String {
    std::env::var("COMPUTERNAME").unwrap_or_default()
}

use std::collections::HashMap;
use std::ffi::OsStr;
use std::sync::Mutex;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::Console::{CTRL_BREAK_EVENT, GenerateConsoleCtrlEvent};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectBasicProcessIdList,
    JobObjectExtendedLimitInformation, QueryInformationJobObject, SetInformationJobObject,
    TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{
    CREATE_NEW_PROCESS_GROUP, OpenProcess, PROCESS_NAME_WIN32, PROCESS_QUERY_LIMITED_INFORMATION,
    QueryFullProcessImageNameW,
};

use super::Signal;
use crate::results::Leaked;

/// A job object's handle, closed when dropped: with `KILL_ON_JOB_CLOSE`, whatever is
/// still in the job dies then — and when the tool dies, however it dies, since the
/// system closes its handles.
struct Job(HANDLE);

// SAFETY: a job handle is a kernel object's handle, usable from any thread.
unsafe impl Send for Job {}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: a handle this process opened and owns alone.
        unsafe { CloseHandle(self.0) };
    }
}

/// Each running check's job, by its main process's id.
static JOBS: Mutex<Option<HashMap<u32, Job>>> = Mutex::new(None);

fn with_job<T>(pid: u32, f: impl FnOnce(HANDLE) -> T) -> Option<T> {
    let jobs = JOBS.lock().unwrap_or_else(|e| e.into_inner());
    jobs.as_ref()?.get(&pid).map(|job| f(job.0))
}

/// Starts the check as the leader of a console process group of its own (so that a
/// Ctrl-Break reaches it and its children, and not the tool).
pub fn isolate(command: &mut tokio::process::Command, _arg0: Option<&OsStr>) {
    command.creation_flags(CREATE_NEW_PROCESS_GROUP);
}

/// Puts the check's main process into a job object of its own, which its children join
/// as they start: they cannot leave it, and closing it kills them all. A process the
/// check starts in the instant between its start and this call stays outside the job
/// (as with every tool that assigns after `CreateProcess`); nested jobs (Windows 8 and
/// later) let this work under a runner that puts the tool itself in a job.
pub fn adopt(child: &tokio::process::Child) {
    let (Some(pid), Some(process)) = (child.id(), child.raw_handle()) else {
        return;
    };
    // SAFETY: plain calls on a new job and the child's own process handle; the
    // structure is fully initialised and its size is given.
    let job = unsafe {
        let job = CreateJobObjectW(std::ptr::null(), std::ptr::null());
        if job.is_null() {
            return;
        }
        let job = Job(job);
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        let set = SetInformationJobObject(
            job.0,
            JobObjectExtendedLimitInformation,
            (&raw const limits).cast(),
            size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
        );
        if set == 0 || AssignProcessToJobObject(job.0, process as HANDLE) == 0 {
            return;
        }
        job
    };
    JOBS.lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(pid, job);
}

/// Closes the check's job: whatever is still in it dies.
pub fn release(pid: u32) {
    let job = JOBS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_mut()
        .and_then(|jobs| jobs.remove(&pid));
    drop(job);
}

/// Asks the check's process group to stop (Ctrl-Break), or makes every process of its
/// job stop (`TerminateJobObject`, exit code 1).
pub fn signal_group(pgid: Option<u32>, signal: Signal) {
    let Some(pid) = pgid else { return };
    match signal {
        Signal::Term => {
            // SAFETY: a console event to the group the check leads; fails harmlessly
            // without a console.
            unsafe { GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, pid) };
        }
        Signal::Kill => {
            // SAFETY: terminates the processes of a job this process created.
            with_job(pid, |job| unsafe { TerminateJobObject(job, 1) });
        }
    }
}

/// A process is not asked to stop one by one (`signal_process` does nothing): stop it by its handle.
pub const SIGNALS_PROCESSES: bool = false;

/// Processes outside a job are not signalled one by one: the job holds them all.
pub fn signal_process(_pid: u32, _signal: Signal) {}

/// The processes still in the check's job, each with its program's path.
pub fn group_members(pgid: Option<u32>) -> Vec<Leaked> {
    let Some(pid) = pgid else { return Vec::new() };
    super::with_command_lines(with_job(pid, job_pids).unwrap_or_default().into_iter())
}

/// The ids of the processes in `job`.
fn job_pids(job: HANDLE) -> Vec<u32> {
    // Two `u32` counts (one `usize`), then the ids (each a `usize`).
    let mut room = 64usize;
    loop {
        let mut buffer = vec![0usize; 1 + room];
        // SAFETY: the buffer is as large as the length given.
        let ok = unsafe {
            QueryInformationJobObject(
                job,
                JobObjectBasicProcessIdList,
                buffer.as_mut_ptr().cast(),
                (buffer.len() * size_of::<usize>()) as u32,
                std::ptr::null_mut(),
            )
        };
        // SAFETY: the first eight bytes are the two `u32` counts.
        let (assigned, listed) = unsafe {
            let counts = buffer.as_ptr().cast::<u32>();
            (*counts, *counts.add(1))
        };
        if ok != 0 && assigned <= listed {
            let listed = (listed as usize).min(room);
            return buffer[1..1 + listed].iter().map(|p| *p as u32).collect();
        }
        if room >= 65_536 || (ok == 0 && assigned == 0) {
            return Vec::new();
        }
        room *= 4;
    }
}

/// The path of `pid`'s program, or `(exited)`.
fn image(pid: u32) -> String {
    // SAFETY: a handle opened, read and closed here; the buffer's length is given.
    unsafe {
        let process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
        if process.is_null() {
            return "(exited)".to_owned();
        }
        let mut name = [0u16; 1024];
        let mut len = name.len() as u32;
        let ok =
            QueryFullProcessImageNameW(process, PROCESS_NAME_WIN32, name.as_mut_ptr(), &mut len);
        CloseHandle(process);
        if ok == 0 {
            return "(exited)".to_owned();
        }
        String::from_utf16_lossy(&name[..len as usize])
    }
}

/// The exit code as Windows reports it.
pub fn exit_code_of(status: std::process::ExitStatus) -> i32 {
    status.code().unwrap_or(1)
}

/// The arguments; cmd.exe's command goes as written, in the one pair of quotes `/S`
/// strips.
pub fn set_args(command: &mut tokio::process::Command, args: &[std::ffi::OsString], cmd_exe: bool) {
    match (cmd_exe, args) {
        (true, [d, s, c, line]) => {
            let mut raw = std::ffi::OsString::new();
            for flag in [d, s, c] {
                raw.push(flag);
                raw.push(" ");
            }
            raw.push("\"");
            raw.push(line);
            raw.push("\"");
            command.raw_arg(raw);
        }
        _ => {
            command.args(args);
        }
    }
}

/// `dir\program.exe` (or `.com`, or the name as it is when it has an extension), when it
/// is a file. Windows' own search would look in the system folder first, where
/// `bash.exe` is WSL's launcher, not a shell: `bash` is never taken from there.
pub fn executable_in(dir: &Path, program: &OsStr) -> Option<std::path::PathBuf> {
    let name = program.to_string_lossy();
    if is_wsl_launcher(dir, &name) {
        return None;
    }
    let candidates: Vec<std::path::PathBuf> = if Path::new(program).extension().is_some() {
        vec![dir.join(program)]
    } else {
        ["exe", "com"]
            .iter()
            .map(|ext| dir.join(format!("{name}.{ext}")))
            .collect()
    };
    candidates.into_iter().find(|c| c.is_file())
}

/// `bash` in the system folder, or in the Store's alias folder: WSL.
fn is_wsl_launcher(dir: &Path, program: &str) -> bool {
    let program = program.to_ascii_lowercase();
    if program != "bash" && program != "bash.exe" {
        return false;
    }
    let dir = dir
        .to_string_lossy()
        .to_ascii_lowercase()
        .replace('/', "\\");
    let system = std::env::var("SystemRoot")
        .unwrap_or_else(|_| r"C:\Windows".to_owned())
        .to_ascii_lowercase();
    dir.starts_with(&format!("{system}\\system32"))
        || dir.starts_with(&format!("{system}\\sysnative"))
        || dir.ends_with("\\microsoft\\windowsapps")
}

/// `bash` not on `PATH`: Git for Windows' (`%ProgramFiles%\Git\bin\bash.exe`), where
/// GitHub's Windows images have it.
pub fn shell_fallback(program: &OsStr) -> Option<std::path::PathBuf> {
    if !program.eq_ignore_ascii_case("bash") {
        return None;
    }
    ["ProgramFiles", "ProgramW6432"]
        .iter()
        .filter_map(std::env::var_os)
        .map(|base| Path::new(&base).join(r"Git\bin\bash.exe"))
        .find(|p| p.is_file())
}

/// `%LOCALAPPDATA%`.
pub fn state_home() -> Option<std::path::PathBuf> {
    super::absolute_var("LOCALAPPDATA")
}

/// See [`image`] for a job's processes.
pub fn command_line(pid: u32) -> String {
    image(pid)
}

/// Ctrl-C and Ctrl-Break stop a run (as SIGINT does).
#[derive(Default)]
pub struct Signals;

impl Signals {
    pub fn new() -> Signals {
        Signals
    }

    /// The next event, as a signal number: 2 for Ctrl-C, 21 for Ctrl-Break.
    pub async fn next(&mut self) -> Option<i32> {
        let mut brk = tokio::signal::windows::ctrl_break().ok()?;
        tokio::select! {
            c = tokio::signal::ctrl_c() => c.ok().map(|()| 2),
            b = brk.recv() => b.map(|()| 21),
        }
    }
}

/// Nothing escapes a job: nothing is adopted.
pub const ADOPTS_ORPHANS: bool = false;
