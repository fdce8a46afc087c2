//! What differs by operating system, behind one API: Linux, macOS and Windows each have
//! a module with the same functions, and no other module of the crate asks which OS it
//! is built for.
//!
//! | | Linux | macOS | Windows |
//! |---|---|---|---|
//! | OS name and version | `/etc/os-release` | `sw_vers` | the registry's `ProductName`, build |
//! | kernel | `uname -r` | `uname -r` | – |
//! | C library | `getconf GNU_LIBC_VERSION`, else musl's loader | – | – |
//! | in a container | `/.dockerenv`, `/run/.containerenv`, `container`, cgroup | never | a container user |
//! | machine id | `/etc/machine-id` | `IOPlatformUUID` | `MachineGuid` |

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::*;

#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
pub use macos::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
mod other;
#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
pub use other::*;

/// The output of `program ARGS` (trimmed), when it runs and succeeds.
#[allow(dead_code)]
fn output_of(program: &str, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !text.is_empty()).then_some(text)
}
