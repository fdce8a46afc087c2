//! Reading what the gate trusts out of git's objects, never out of the working tree: the
//! agent can edit every file of its worktree, but not the content a commit id names.
//!
//! Every command runs with replacement objects off (`git replace` would let the agent
//! swap what a commit id shows), without optional locks, and without the user's or the
//! system's configuration's helpers (no pager, no fsmonitor).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::manifest::files::{MAX_NAMED_FILE_BYTES, NamedFiles};

/// `git ARGS` in `dir`, hardened as the module says: its stdout when it succeeds.
pub fn git(dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let out = Command::new("git")
        .args(["-c", "core.fsmonitor=false", "-c", "core.pager=cat"])
        .args(args)
        .current_dir(dir)
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_OBJECT_DIRECTORY")
        .env_remove("GIT_ALTERNATE_OBJECT_DIRECTORIES")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

/// The first line of `git ARGS`' output, when it succeeds and says something.
pub fn line(dir: &Path, args: &[&str]) -> Option<String> {
    let out = git(dir, args)?;
    let text = String::from_utf8(out).ok()?;
    let line = text.lines().next()?.trim().to_owned();
    (!line.is_empty()).then_some(line)
}

/// Whether `commit` is a commit whose objects this repository holds.
pub fn commit_exists(root: &Path, commit: &str) -> bool {
    line(root, &["cat-file", "-t", &format!("{commit}^{{commit}}")]).as_deref() == Some("commit")
}

/// What a path of a commit's tree is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// Nothing at that path.
    Absent,
    /// A regular file: its blob's id.
    File(String),
    /// Anything else (a symbolic link, a folder, a submodule): its mode.
    Other(String),
}

/// The entry at `path` (parts joined by `/`) of `commit`'s tree; `None` when the tree
/// cannot be read (its objects are gone).
pub fn entry(root: &Path, commit: &str, path: &str) -> Option<Entry> {
    // `ls-tree` of a path that is not there succeeds and lists nothing.
    let out = git(root, &["ls-tree", "-z", "--full-tree", commit, "--", path])?;
    let text = String::from_utf8_lossy(&out);
    let Some(record) = text.split('\0').find(|r| !r.is_empty()) else {
        return Some(Entry::Absent);
    };
    // `<mode> SP <type> SP <object> TAB <path>`
    let (meta, _) = record.split_once('\t')?;
    let mut parts = meta.split(' ');
    let (mode, kind, object) = (parts.next()?, parts.next()?, parts.next()?);
    Some(match (mode, kind) {
        ("100644" | "100755", "blob") => Entry::File(object.to_owned()),
        _ => Entry::Other(mode.to_owned()),
    })
}

/// The bytes of blob `object`, at most `limit`: `Err(why)` when larger or unreadable.
pub fn blob(root: &Path, object: &str, limit: u64) -> Result<Vec<u8>, String> {
    let size: u64 = line(root, &["cat-file", "-s", object])
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("its object {object} cannot be read"))?;
    if size > limit {
        return Err(format!("is larger than {limit} bytes"));
    }
    git(root, &["cat-file", "blob", object])
        .ok_or_else(|| format!("its object {object} cannot be read"))
}

/// The files of one commit, under the folder `prefix` of its tree (the manifest's
/// folder, relative to the repository root): what the manifest committed there names.
#[derive(Debug, Clone)]
pub struct CommitFiles {
    pub root: PathBuf,
    pub commit: String,
    pub prefix: String,
}

impl CommitFiles {
    /// `relative` (to the manifest's folder) as a path of the commit's tree.
    pub fn tree_path(&self, relative: &str) -> String {
        let relative = relative.trim_start_matches("./");
        if self.prefix.is_empty() {
            relative.to_owned()
        } else {
            format!("{}/{relative}", self.prefix.trim_end_matches('/'))
        }
    }
}

impl NamedFiles for CommitFiles {
    fn read(&self, relative: &str) -> Result<Option<Vec<u8>>, String> {
        let path = self.tree_path(relative);
        match entry(&self.root, &self.commit, &path) {
            None => Err(format!(
                "cannot be read from commit {} (its objects are gone)",
                super::trust::short(&self.commit)
            )),
            Some(Entry::Absent) => Ok(None),
            Some(Entry::Other(mode)) => Err(format!(
                "is not a regular file in commit {} (mode {mode})",
                super::trust::short(&self.commit)
            )),
            Some(Entry::File(object)) => blob(&self.root, &object, MAX_NAMED_FILE_BYTES).map(Some),
        }
    }
}
