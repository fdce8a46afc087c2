//! Windows.

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
