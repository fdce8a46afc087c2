//! The user's state folder, outside every repository: where the coding-agent gate keeps
//! what an agent working in a repository must not be able to forge by writing a file
//! there — each session's count of blocks and the snapshot of the manifest it is
//! trusted at, a person's allowances of a changed manifest, and the snapshot a person
//! pinned for sessions that send no start event.
//!
//! `$XDG_STATE_HOME/cargo-verify-matrix`, else `~/.local/state/cargo-verify-matrix`
//! (on macOS too), and `%LOCALAPPDATA%\cargo-verify-matrix` on Windows. A state folder inside the
//! repository being judged is refused: the agent could write it.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};

use crate::results::write_json_atomic;

/// The state folder's name under the platform's folder for such state.
const APP: &str = "cargo-verify-matrix";

/// The most bytes of one state file read (they hold a few short fields).
const MAX_STATE_BYTES: u64 = 64 * 1024;

/// The most bytes of a state file holding a manifest's snapshot: the manifest's own
/// bound, and the files it names.
const MAX_SNAPSHOT_BYTES: u64 = 64 * 1024 * 1024;

/// The state folder for the repository at `root` (which it must lie outside of).
pub fn dir(root: &Path) -> Result<PathBuf, String> {
    let base = crate::run::platform::state_home().ok_or_else(|| {
        "no folder for the gate's state: set HOME (or XDG_STATE_HOME) for the agent's client"
            .to_owned()
    })?;
    let dir = base.join(APP);
    let canonical_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let canonical_dir = canonical_ancestor(&dir);
    if canonical_dir.starts_with(&canonical_root) {
        return Err(format!(
            "the gate's state folder {} is inside the repository {}, where the agent could write it; point XDG_STATE_HOME (or HOME) outside it",
            dir.display(),
            root.display()
        ));
    }
    Ok(dir)
}

/// `path` with its deepest existing ancestor resolved (symbolic links followed), so that
/// a folder not made yet is still compared by where it will really be.
fn canonical_ancestor(path: &Path) -> PathBuf {
    for ancestor in path.ancestors() {
        if let Ok(real) = std::fs::canonicalize(ancestor) {
            let rest = path.strip_prefix(ancestor).unwrap_or(Path::new(""));
            return real.join(rest);
        }
    }
    path.to_path_buf()
}

/// A file name for `parts` (any text): a digest, so that any id makes a plain name.
pub fn key(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The JSON at `path`; a missing, oversized or unreadable file is `None`.
pub fn read<T: DeserializeOwned>(path: &Path) -> Option<T> {
    read_within(path, MAX_STATE_BYTES)
}

/// [`read`] of a file that holds a manifest's snapshot (a session's, a pinned one).
pub fn read_large<T: DeserializeOwned>(path: &Path) -> Option<T> {
    read_within(path, MAX_SNAPSHOT_BYTES)
}

fn read_within<T: DeserializeOwned>(path: &Path, limit: u64) -> Option<T> {
    let bytes = crate::untrusted::read_regular(path, limit).ok()??;
    serde_json::from_slice(&bytes).ok()
}

/// Saves `value` at `path` (written aside, then renamed into place), creating folders.
pub fn write<T: Serialize>(path: &Path, value: &T) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    write_json_atomic(path, value).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_plain_names_and_parts_do_not_run_together() {
        let a = key(&["ab", "c"]);
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, key(&["a", "bc"]));
        assert_eq!(a, key(&["ab", "c"]));
    }

    #[test]
    fn an_ancestor_that_exists_is_resolved() {
        let temp = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(temp.path()).unwrap();
        assert_eq!(
            canonical_ancestor(&temp.path().join("a/b")),
            real.join("a/b")
        );
    }
}
