//! Linux.

use std::path::Path;

use super::output_of;
use crate::run::facts::{OsFacts, linux_container, linux_machine_id, os_release, under};

/// The distribution's name and version, the kernel and the C library.
pub fn os_facts(root: &Path) -> OsFacts {
    let (name, version) = os_release(root);
    let kernel = nix::sys::utsname::uname()
        .ok()
        .and_then(|u| u.release().to_str().map(str::to_owned));
    let libc = output_of("getconf", &["GNU_LIBC_VERSION"]).or_else(|| {
        let lib = std::fs::read_dir(under(root, "/lib")).ok()?;
        lib.filter_map(Result::ok)
            .any(|e| e.file_name().to_string_lossy().starts_with("ld-musl"))
            .then(|| "musl".to_owned())
    });
    OsFacts {
        name,
        version,
        kernel,
        libc,
    }
}

/// Inside a container: `Some(runtime)` (the runtime when known).
pub fn container(root: &Path) -> Option<Option<String>> {
    linux_container(root, std::env::var("container").ok())
}

/// `/etc/machine-id`.
pub fn machine_id(root: &Path) -> Option<String> {
    linux_machine_id(root)
}

/// The host's name.
pub fn hostname() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_default()
}
