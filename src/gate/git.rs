//! Reading what the gate trusts out of git's objects, never out of the working tree, and
//! never taking git's word for them: the agent can write `.git` too (a loose object
//! overwritten, an alternate object store, a replacement, a graft), so every object read
//! — the commit, each tree on the way to a file, the file's blob — is hashed here and
//! must hash to the id it was asked for. A commit id then names one manifest, whatever
//! the repository's folder holds.
//!
//! Every command runs in the repository's root with that root as its work tree (a
//! `core.worktree` the agent set moves nothing), replacement objects off, without
//! optional locks, and without the user's fsmonitor or pager.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha1::Digest as _;

/// The largest object read: a manifest's bound, with room for a tree's entries.
const MAX_OBJECT_BYTES: usize = 32 * 1024 * 1024;

/// A repository's objects, read through `git` and checked against their ids.
#[derive(Debug, Clone)]
pub struct Git {
    root: PathBuf,
}

impl Git {
    /// The repository whose work tree is `root`.
    pub fn new(root: &Path) -> Git {
        Git {
            root: root.to_path_buf(),
        }
    }

    /// `git ARGS` in the root, hardened as the module says: its stdout when it succeeds.
    pub fn run(&self, args: &[&str]) -> Option<Vec<u8>> {
        let out = Command::new("git")
            .args(["-c", "core.fsmonitor=false", "-c", "core.pager=cat"])
            .args(args)
            .current_dir(&self.root)
            .env("GIT_WORK_TREE", &self.root)
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env_remove("GIT_DIR")
            .env_remove("GIT_OBJECT_DIRECTORY")
            .env_remove("GIT_ALTERNATE_OBJECT_DIRECTORIES")
            .env_remove("GIT_INDEX_FILE")
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()?;
        out.status.success().then_some(out.stdout)
    }

    /// The first line of `git ARGS`' output, when it succeeds and says something.
    pub fn line(&self, args: &[&str]) -> Option<String> {
        let out = self.run(args)?;
        let text = String::from_utf8(out).ok()?;
        let line = text.lines().next()?.trim().to_owned();
        (!line.is_empty()).then_some(line)
    }

    /// The commit `HEAD` names now.
    pub fn head(&self) -> Option<String> {
        self.line(&["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])
            .filter(|id| is_object_id(id))
    }

    /// Object `id` of `kind` (`commit`, `tree`, `blob`), its bytes hashed against `id`.
    pub fn object(&self, kind: &str, id: &str) -> Result<Vec<u8>, String> {
        if !is_object_id(id) {
            return Err(format!("`{id}` is not an object id"));
        }
        let bytes = self.run(&["cat-file", kind, id]).ok_or_else(|| {
            format!(
                "its {kind} object {} cannot be read (its objects are gone)",
                short(id)
            )
        })?;
        if bytes.len() > MAX_OBJECT_BYTES {
            return Err(format!(
                "its {kind} object {} is larger than {MAX_OBJECT_BYTES} bytes",
                short(id)
            ));
        }
        if object_id(kind, &bytes, id.len()) != id {
            return Err(format!(
                "its {kind} object {} does not hash to its id: the repository's objects were altered",
                short(id)
            ));
        }
        Ok(bytes)
    }

    /// The file at `path` (parts joined by `/`) of `commit`'s tree: `Ok(None)` when there
    /// is nothing there; each object on the way checked against its id.
    pub fn file(&self, commit: &str, path: &str) -> Result<Option<Vec<u8>>, String> {
        let commit_bytes = self.object("commit", commit)?;
        let mut tree = commit_tree(&commit_bytes)
            .ok_or_else(|| format!("commit {} names no tree", short(commit)))?;
        let parts: Vec<&str> = path
            .split('/')
            .filter(|p| !p.is_empty() && *p != ".")
            .collect();
        let Some((last, folders)) = parts.split_last() else {
            return Ok(None);
        };
        for folder in folders {
            let entries = self.object("tree", &tree)?;
            match entry(&entries, folder, tree.len())? {
                Some((mode, id)) if mode == "40000" => tree = id,
                Some((mode, _)) => {
                    return Err(format!(
                        "`{folder}` is not a folder in commit {} (mode {mode})",
                        short(commit)
                    ));
                }
                None => return Ok(None),
            }
        }
        let entries = self.object("tree", &tree)?;
        match entry(&entries, last, tree.len())? {
            None => Ok(None),
            Some((mode, id)) if mode == "100644" || mode == "100755" => {
                self.object("blob", &id).map(Some)
            }
            Some((mode, _)) => Err(format!(
                "`{path}` is not a regular file in commit {} (mode {mode})",
                short(commit)
            )),
        }
    }
}

/// Whether `id` is a full object id (40 hex digits for SHA-1, 64 for SHA-256).
fn is_object_id(id: &str) -> bool {
    matches!(id.len(), 40 | 64) && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The id git gives an object of `kind` holding `bytes`, in the hash of an id `len` long.
fn object_id(kind: &str, bytes: &[u8], len: usize) -> String {
    let header = format!("{kind} {}\0", bytes.len());
    let hex = |digest: &[u8]| {
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    if len == 64 {
        let mut hasher = sha2::Sha256::new();
        hasher.update(header.as_bytes());
        hasher.update(bytes);
        hex(&hasher.finalize())
    } else {
        let mut hasher = sha1::Sha1::new();
        hasher.update(header.as_bytes());
        hasher.update(bytes);
        hex(&hasher.finalize())
    }
}

/// The tree a commit object names (its first line, `tree <id>`).
fn commit_tree(commit: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(commit.split(|b| *b == b'\n').next()?).ok()?;
    let id = text.strip_prefix("tree ")?;
    is_object_id(id).then(|| id.to_owned())
}

/// The entry `name` of a tree object's bytes (`<mode> <name>\0<id bytes>`, repeated):
/// its mode and id (hex), with ids of `id_len` hex digits.
fn entry(tree: &[u8], name: &str, id_len: usize) -> Result<Option<(String, String)>, String> {
    let raw_len = id_len / 2;
    let mut rest = tree;
    while !rest.is_empty() {
        let space = rest
            .iter()
            .position(|b| *b == b' ')
            .ok_or("a tree entry without its mode")?;
        let nul = rest
            .iter()
            .position(|b| *b == 0)
            .ok_or("a tree entry without its name's end")?;
        if nul < space || rest.len() < nul + 1 + raw_len {
            return Err("a tree entry cut short".to_owned());
        }
        let mode = String::from_utf8_lossy(&rest[..space]).into_owned();
        let entry_name = &rest[space + 1..nul];
        let id: String = rest[nul + 1..nul + 1 + raw_len]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        if entry_name == name.as_bytes() {
            return Ok(Some((mode, id)));
        }
        rest = &rest[nul + 1 + raw_len..];
    }
    Ok(None)
}

/// The first 12 characters of a commit id.
pub fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_objects_id_is_the_hash_git_gives_it() {
        // `printf 'hello\n' | git hash-object --stdin`
        assert_eq!(
            object_id("blob", b"hello\n", 40),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
        assert!(is_object_id("ce013625030ba8dba906f756967f9e9ca394464a"));
        assert!(!is_object_id("HEAD"));
        assert!(!is_object_id("ce013625"));
    }

    #[test]
    fn a_trees_entries_are_read_by_name() {
        let mut tree = Vec::new();
        for (mode, name, byte) in [("100644", "a.yml", 1u8), ("40000", "sub", 2u8)] {
            tree.extend_from_slice(format!("{mode} {name}\0").as_bytes());
            tree.extend_from_slice(&[byte; 20]);
        }
        assert_eq!(
            entry(&tree, "sub", 40).unwrap(),
            Some(("40000".to_owned(), "02".repeat(20)))
        );
        assert_eq!(entry(&tree, "b.yml", 40).unwrap(), None);
        assert!(entry(&tree[..tree.len() - 3], "sub", 40).is_err());
    }
}
