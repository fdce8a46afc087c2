//! The files a manifest names (a Compose file, a dev container's configuration), read
//! from where the manifest itself is trusted from: the working tree — confined to the
//! manifest's folder (symbolic links resolved, and none may lead out), regular files
//! only (a FIFO, a device or a folder is refused, never waited on), at most
//! [`MAX_NAMED_FILE_BYTES`] — or, for the agent gate, a commit's git objects.

use std::path::{Path, PathBuf};

/// The largest file a manifest names that is read (1 MiB): far beyond any Compose file
/// or dev container configuration.
pub const MAX_NAMED_FILE_BYTES: u64 = 1024 * 1024;

/// Where the files a manifest names are read from.
pub trait NamedFiles {
    /// The bytes of `relative` (a path inside the manifest's folder, parts joined by
    /// `/`): `Ok(None)` when there is no such file; `Err(why)` when what is there cannot
    /// be read as one (not a regular file, too large, a link leading out, unreadable).
    fn read(&self, relative: &str) -> Result<Option<Vec<u8>>, String>;

    /// Whether `relative` is a file that can be read.
    fn is_file(&self, relative: &str) -> bool {
        matches!(self.read(relative), Ok(Some(_)))
    }
}

/// The working tree: files under a manifest's folder.
#[derive(Debug, Clone)]
pub struct WorkingTree {
    dir: PathBuf,
}

impl WorkingTree {
    /// The files under `dir` (the manifest's folder).
    pub fn new(dir: &Path) -> WorkingTree {
        WorkingTree {
            dir: dir.to_path_buf(),
        }
    }
}

impl NamedFiles for WorkingTree {
    fn read(&self, relative: &str) -> Result<Option<Vec<u8>>, String> {
        let path = self.dir.join(relative);
        if std::fs::symlink_metadata(&path).is_err() {
            return Ok(None);
        }
        let real =
            std::fs::canonicalize(&path).map_err(|_| "is a symbolic link to nothing".to_owned())?;
        let inside = std::fs::canonicalize(&self.dir).is_ok_and(|dir| real.starts_with(dir));
        if !inside {
            return Err(format!(
                "leads outside the repository (to `{}`)",
                real.display()
            ));
        }
        match crate::untrusted::read_regular(&real, MAX_NAMED_FILE_BYTES) {
            Ok(Some(bytes)) => Ok(Some(bytes)),
            Ok(None) => Err(format!("is larger than {} bytes", MAX_NAMED_FILE_BYTES)),
            Err(e) => Err(format!("cannot be read: {e}")),
        }
    }
}
