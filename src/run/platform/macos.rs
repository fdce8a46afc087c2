//! macOS.

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
