//! What the coding-agent gate trusts, and what it refuses. An agent can edit any file of
//! its worktree — the manifest, the files the manifest names, `.git` itself — so the
//! gate judges by the manifest **as committed** when the session began, read from git's
//! objects ([`super::git`]), never from the working tree:
//!
//! - the root: `git rev-parse --show-toplevel` from the project folder the client starts
//!   the hook in (`CLAUDE_PROJECT_DIR` when set, else the hook's own folder);
//! - the commit: `HEAD` at the session's start (its `SessionStart` event; for the MCP
//!   server, its own start), kept in the user's state folder outside the repository
//!   ([`super::state`]); without one, the merge-base of `HEAD` with its upstream branch
//!   ([`Repository::start_without_session`]);
//! - the manifest at that commit, and every file it names (a Compose file, a dev
//!   container's configuration) from the same commit. A commit that cannot be read, a
//!   manifest that does not load from it: nothing can be trusted, and the gate blocks.
//!
//! The working copy's manifest is what runs only where every change it makes is a
//! proven strengthening ([`super::strengthen`]), and the files it names are the
//! committed ones byte for byte. Anything else blocks until a person allows that exact
//! manifest and those files (`hook allow`, kept in the state folder by their digest).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::git::{self, CommitFiles, Entry};
use super::state;
use super::strengthen::{self, Change};
use crate::manifest::files::{NamedFiles, WorkingTree};
use crate::manifest::{self, Dialect, Enter, FILE_NAMES, Manifest, ManifestError, guard};

/// The repository the gate judges: its root folder and the user's state folder for it.
pub struct Repository {
    /// The root (canonical).
    pub root: PathBuf,
    /// The state folder (outside the root).
    pub state: PathBuf,
}

impl Repository {
    /// The repository around the project folder the client started the gate in.
    pub fn of_project(here: &Path) -> Result<Repository, String> {
        let project = std::env::var_os("CLAUDE_PROJECT_DIR")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute() && p.is_dir())
            .unwrap_or_else(|| here.to_path_buf());
        Repository::around(&project)
    }

    /// The repository holding `folder` (the folder itself when it is in none).
    pub fn around(folder: &Path) -> Result<Repository, String> {
        let top = git::line(folder, &["rev-parse", "--show-toplevel"])
            .map(PathBuf::from)
            .filter(|p| p.is_dir())
            .unwrap_or_else(|| folder.to_path_buf());
        let root = std::fs::canonicalize(&top)
            .map_err(|e| format!("cannot read the repository folder {}: {e}", top.display()))?;
        let state = state::dir(&root)?;
        Ok(Repository { root, state })
    }

    /// The commit `HEAD` names now (none in a repository without commits, or outside git).
    pub fn head(&self) -> Option<String> {
        git::line(
            &self.root,
            &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
        )
    }

    /// The commit a session that sent no start event is judged from: not `HEAD` (the
    /// agent may have committed before its first stop) but the merge-base of `HEAD` with
    /// its upstream branch, else with the remote's default branch. Without either there
    /// is none the agent could not have made: why.
    pub fn start_without_session(&self) -> Result<String, String> {
        for other in ["@{upstream}", "refs/remotes/origin/HEAD"] {
            if let Some(base) = git::line(&self.root, &["merge-base", "HEAD", other]) {
                return Ok(base);
            }
        }
        Err(
            "the session's start is not known: the agent's client sent no start event, and \
             HEAD has no upstream branch to take its merge-base with (a commit made in the \
             session would be trusted otherwise). Register the hook for the client's \
             session-start event (SessionStart, sessionStart), as docs/agents.md shows"
                .to_owned(),
        )
    }

    /// Where the allowances of this repository are kept.
    fn allowances_path(&self) -> PathBuf {
        let root = self.root.to_string_lossy();
        self.state
            .join("allowed")
            .join(format!("{}.json", state::key(&[&root])))
    }

    /// Whether a person allowed what `key` names ([`Judged::Blocked`]'s) here.
    pub fn allowed(&self, key: &str) -> bool {
        state::read::<Allowances>(&self.allowances_path())
            .is_some_and(|a| a.root == self.root && a.digests.iter().any(|d| d == key))
    }

    /// Records that a person allowed what `key` names.
    pub fn allow(&self, key: &str) -> Result<PathBuf, String> {
        let path = self.allowances_path();
        let mut allowances = state::read::<Allowances>(&path)
            .filter(|a| a.root == self.root)
            .unwrap_or_else(|| Allowances {
                root: self.root.clone(),
                digests: Vec::new(),
            });
        if !allowances.digests.iter().any(|d| d == key) {
            allowances.digests.push(key.to_owned());
        }
        // The newest few: an allowance is for the change at hand, not a collection.
        let excess = allowances.digests.len().saturating_sub(MAX_ALLOWANCES);
        allowances.digests.drain(..excess);
        state::write(&path, &allowances)
            .map_err(|e| format!("cannot save the allowance in {}: {e}", path.display()))?;
        Ok(path)
    }
}

/// The most manifests remembered as allowed in one repository.
const MAX_ALLOWANCES: usize = 20;

/// A person's allowances in one repository: the digests of the manifests (and the files
/// they name) they allowed.
#[derive(Debug, Serialize, Deserialize)]
struct Allowances {
    root: PathBuf,
    digests: Vec<String>,
}

/// What the gate judges by.
pub enum Judged {
    /// This manifest runs; the notes are for the person.
    Run {
        manifest: Box<Manifest>,
        notes: Vec<String>,
    },
    /// The working copy's manifest (or a file it names) changed in a way not proven a
    /// strengthening, and no person allowed it.
    Blocked(Blocked),
}

/// A change the gate cannot use.
pub struct Blocked {
    /// The manifest's path, relative to the root.
    pub path: PathBuf,
    /// The commit the gate trusts (none: the repository has no commit).
    pub commit: Option<String>,
    /// The hook's `max-blocks` as committed (else the default).
    pub max_blocks: u32,
    /// Every change, the unproven first.
    pub changes: Vec<Change>,
    /// What a person allows with `hook allow`: the working copy's manifest and the
    /// files it names, by digest (none: nothing to allow, the manifest is gone).
    pub key: Option<String>,
}

/// What `hook allow` shows a person: the working copy's manifest, its changes against
/// the trusted commit's, and the key an allowance records.
pub struct Review {
    pub path: PathBuf,
    pub digest: String,
    pub changes: Vec<Change>,
    pub committed: bool,
    pub key: String,
}

/// The manifest of `repo` (`given`, relative to the root, else the first of
/// [`FILE_NAMES`] at the root, else the root's Cargo.toml table) as committed at
/// `commit` and in the working copy, judged: what runs, or why nothing may.
pub fn judge(
    repo: &Repository,
    commit: Option<&str>,
    given: Option<&Path>,
    dialect: Dialect,
) -> Result<Judged, String> {
    let given = given.map(|p| inside_root(&repo.root, p)).transpose()?;
    let committed = match commit {
        Some(commit) => committed(repo, commit, given.as_deref(), dialect)?,
        None => None,
    };
    let path = given
        .clone()
        .or_else(|| committed.as_ref().map(|(p, _)| p.clone()))
        .or_else(|| working_manifest_path(&repo.root))
        .unwrap_or_else(|| PathBuf::from(FILE_NAMES[0]));
    let working = working(repo, &path, dialect)?;
    let max_blocks = committed
        .as_ref()
        .map_or(manifest::DEFAULT_MAX_BLOCKS, |(_, m)| m.hook.max_blocks);
    let Some(working) = working else {
        return Ok(Judged::Blocked(Blocked {
            path: path.clone(),
            commit: commit.map(str::to_owned),
            max_blocks,
            changes: vec![Change {
                change: format!("the manifest `{}` was removed", path.display()),
                proven: false,
            }],
            key: None,
        }));
    };
    let (changes, key) = changes(repo, commit, committed.as_ref().map(|(_, m)| m), &working);
    let unproven: Vec<&Change> = changes.iter().filter(|c| !c.proven).collect();
    if unproven.is_empty() {
        let notes = if changes.is_empty() {
            Vec::new()
        } else {
            let listed: Vec<&str> = changes.iter().map(|c| c.change.as_str()).collect();
            vec![format!(
                "`{}` strengthens the committed manifest: {}",
                path.display(),
                listed.join("; ")
            )]
        };
        return Ok(Judged::Run {
            manifest: Box::new(working),
            notes,
        });
    }
    if repo.allowed(&key) {
        let listed: Vec<&str> = unproven.iter().map(|c| c.change.as_str()).collect();
        return Ok(Judged::Run {
            manifest: Box::new(working),
            notes: vec![format!(
                "a person allowed the changes to `{}`: {}",
                path.display(),
                listed.join("; ")
            )],
        });
    }
    Ok(Judged::Blocked(Blocked {
        path,
        commit: commit.map(str::to_owned),
        max_blocks,
        changes,
        key: Some(key),
    }))
}

/// What `hook allow` shows and records: the working copy against `commit`'s manifest.
pub fn review(
    repo: &Repository,
    commit: Option<&str>,
    given: Option<&Path>,
    dialect: Dialect,
) -> Result<Review, String> {
    let given = given.map(|p| inside_root(&repo.root, p)).transpose()?;
    let committed = match commit {
        Some(commit) => committed(repo, commit, given.as_deref(), dialect)?,
        None => None,
    };
    let path = given
        .or_else(|| committed.as_ref().map(|(p, _)| p.clone()))
        .or_else(|| working_manifest_path(&repo.root))
        .unwrap_or_else(|| PathBuf::from(FILE_NAMES[0]));
    let working = working(repo, &path, dialect)?
        .ok_or_else(|| format!("there is no manifest `{}` to allow", path.display()))?;
    let (changes, key) = changes(repo, commit, committed.as_ref().map(|(_, m)| m), &working);
    Ok(Review {
        path,
        digest: working.digest.clone(),
        changes,
        committed: committed.is_some(),
        key,
    })
}

/// The changes of `working` against `committed` (none committed: that is the change),
/// with the files the manifests name compared byte for byte, and the key that allows
/// them.
fn changes(
    repo: &Repository,
    commit: Option<&str>,
    committed: Option<&Manifest>,
    working: &Manifest,
) -> (Vec<Change>, String) {
    let tree = WorkingTree::new(&repo.root.join(&working.dir));
    let named = named_files(working, committed);
    let mut key = Sha256::new();
    key.update(working.digest.as_bytes());
    let mut working_files = Vec::new();
    for file in &named {
        let bytes = tree.read(file);
        key.update((file.len() as u64).to_le_bytes());
        key.update(file.as_bytes());
        match &bytes {
            Ok(Some(b)) => {
                key.update((b.len() as u64).to_le_bytes());
                key.update(b);
            }
            _ => key.update(u64::MAX.to_le_bytes()),
        }
        working_files.push((file.clone(), bytes));
    }
    let key = format!("sha256:{:x}", key.finalize());
    let Some(committed) = committed else {
        let at = commit.map_or_else(
            || "the repository has no commit".to_owned(),
            |c| format!("nothing at {}", short(c)),
        );
        return (
            vec![Change {
                change: format!(
                    "no manifest is committed ({at}): the gate trusts only a committed manifest"
                ),
                proven: false,
            }],
            key,
        );
    };
    let mut changes = strengthen::compare(committed, working);
    if let Some(commit) = commit {
        let prefix = git_path(&committed.dir);
        let at = CommitFiles {
            root: repo.root.clone(),
            commit: commit.to_owned(),
            prefix: if prefix == "." { String::new() } else { prefix },
        };
        for (file, bytes) in working_files {
            let was = at.read(&file);
            let change = match (was, bytes) {
                (Ok(Some(was)), Ok(Some(now))) if was == now => continue,
                (Ok(None), Ok(None)) => continue,
                (Ok(Some(_)), Ok(Some(_))) => "differs from the committed one",
                (Ok(None), Ok(Some(_))) => "was added",
                (Ok(Some(_)), Ok(None)) => "was removed",
                (Err(_), _) | (_, Err(_)) => "cannot be compared with the committed one",
            };
            changes.insert(
                0,
                Change {
                    change: format!("`{file}`, which a way in (`enter`) reads, {change}"),
                    proven: false,
                },
            );
        }
    }
    (changes, key)
}

/// The files the ways in of `working` and `committed` read (relative to the manifest's
/// folder), each once.
fn named_files(working: &Manifest, committed: Option<&Manifest>) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for m in std::iter::once(working).chain(committed) {
        for env in &m.environments {
            let file = match &env.enter {
                Some(Enter::Compose { file, .. }) => file.clone(),
                Some(Enter::Devcontainer { config }) => config.clone(),
                _ => continue,
            };
            if !file.is_empty() && !files.contains(&file) {
                files.push(file);
            }
        }
    }
    files
}

/// The manifest committed at `commit` (at `given`, else where it is found), with the
/// files it names read from the same commit; `None` when the commit has no manifest.
/// A commit whose objects are gone, or a manifest that does not load: why nothing can
/// be trusted.
fn committed(
    repo: &Repository,
    commit: &str,
    given: Option<&Path>,
    dialect: Dialect,
) -> Result<Option<(PathBuf, Manifest)>, String> {
    let at = short(commit);
    if !git::commit_exists(&repo.root, commit) {
        return Err(format!(
            "the session's starting commit {at} cannot be read from the repository (its \
             history was rewritten, or its objects removed), so nothing the gate trusts is \
             left to judge by; start a new session"
        ));
    }
    let found = match given {
        Some(path) => Some(path.to_path_buf()),
        None => committed_manifest_path(&repo.root, commit)?,
    };
    let Some(path) = found else {
        return Ok(None);
    };
    let spec = git_path(&path);
    let object = match git::entry(&repo.root, commit, &spec) {
        None => {
            return Err(format!(
                "`{spec}` cannot be read from commit {at} (its objects are gone), so nothing the gate trusts is left to judge by"
            ));
        }
        Some(Entry::Absent) => return Ok(None),
        Some(Entry::Other(mode)) => {
            return Err(format!(
                "`{spec}` is not a regular file in commit {at} (mode {mode})"
            ));
        }
        Some(Entry::File(object)) => object,
    };
    let bytes = git::blob(&repo.root, &object, guard::MAX_MANIFEST_BYTES)
        .map_err(|why| format!("`{spec}` as committed at {at} {why}"))?;
    let text = guard::text_of(&path, bytes).map_err(|e| e.to_string())?;
    let prefix = path
        .parent()
        .map(git_path)
        .filter(|p| !p.is_empty())
        .unwrap_or_default();
    let files = CommitFiles {
        root: repo.root.clone(),
        commit: commit.to_owned(),
        // `.github/verify-matrix.yml` describes the folder above it.
        prefix: prefix
            .strip_suffix(".github")
            .map_or(prefix.clone(), |p| p.trim_end_matches('/').to_owned()),
    };
    let loaded = if path.file_name().is_some_and(|n| n == "Cargo.toml") {
        manifest::from_cargo_toml_text_in(&path, &text, Some(&files))
    } else {
        manifest::from_text_in(&path, &text, dialect, Some(&files))
    };
    loaded.map(|m| Some((path, m))).map_err(|e| {
        format!(
            "the manifest committed at {at} does not load, so the gate has nothing to trust: {e}"
        )
    })
}

/// The working copy's manifest at `path` (relative to the root): `None` when there is
/// none.
fn working(repo: &Repository, path: &Path, dialect: Dialect) -> Result<Option<Manifest>, String> {
    let full = repo.root.join(path);
    if std::fs::symlink_metadata(&full).is_err() {
        return Ok(None);
    }
    match manifest::load_as(Some(path), &repo.root, dialect) {
        Ok(m) => Ok(Some(m)),
        Err(ManifestError::NotFound { .. }) => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// `path` relative to `root`; an absolute path must lie inside it.
fn inside_root(root: &Path, path: &Path) -> Result<PathBuf, String> {
    let relative = if path.is_absolute() {
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        real.strip_prefix(root)
            .map(Path::to_path_buf)
            .map_err(|_| {
                format!(
                    "--manifest {} is outside the repository {}",
                    path.display(),
                    root.display()
                )
            })?
    } else {
        path.to_path_buf()
    };
    if relative
        .components()
        .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Err(format!(
            "--manifest {} must be a path inside the repository, relative to its root {}",
            path.display(),
            root.display()
        ));
    }
    Ok(relative)
}

/// The first of [`FILE_NAMES`] at the root of `commit`, else its Cargo.toml when that
/// holds the table; `Err` when the commit's tree cannot be read.
fn committed_manifest_path(root: &Path, commit: &str) -> Result<Option<PathBuf>, String> {
    let unreadable = || {
        format!(
            "the tree of commit {} cannot be read (its objects are gone), so nothing the gate trusts is left to judge by",
            short(commit)
        )
    };
    for name in FILE_NAMES {
        match git::entry(root, commit, name) {
            None => return Err(unreadable()),
            Some(Entry::Absent) => {}
            Some(_) => return Ok(Some(PathBuf::from(name))),
        }
    }
    match git::entry(root, commit, "Cargo.toml") {
        None => Err(unreadable()),
        Some(Entry::File(object)) => {
            let text = git::blob(root, &object, guard::MAX_MANIFEST_BYTES).unwrap_or_default();
            Ok(String::from_utf8_lossy(&text)
                .contains("metadata.verify-matrix")
                .then(|| PathBuf::from("Cargo.toml")))
        }
        Some(_) => Ok(None),
    }
}

/// The first of [`FILE_NAMES`] at the root of the working copy, else its Cargo.toml when
/// that holds the table.
fn working_manifest_path(root: &Path) -> Option<PathBuf> {
    FILE_NAMES
        .iter()
        .map(PathBuf::from)
        .find(|name| root.join(name).is_file())
        .or_else(|| {
            let bytes =
                crate::untrusted::read_regular(&root.join("Cargo.toml"), guard::MAX_MANIFEST_BYTES)
                    .ok()??;
            String::from_utf8_lossy(&bytes)
                .contains("metadata.verify-matrix")
                .then(|| PathBuf::from("Cargo.toml"))
        })
}

/// `path` as git names it inside a tree (`/` between parts).
fn git_path(path: &Path) -> String {
    path.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The first 12 characters of a commit id.
pub fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}
