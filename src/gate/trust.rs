//! What the coding-agent gate trusts, and what it refuses. An agent can edit any file of
//! its worktree — the manifest, the files the manifest names, `.git` itself — so the
//! gate judges by a **snapshot** of the manifest as committed when the session began,
//! taken then and kept outside the repository:
//!
//! - the root: the folder holding `.git`, found from the project folder the client
//!   starts the hook in (`CLAUDE_PROJECT_DIR` when set, else the hook's own folder) —
//!   never moved by the repository's own configuration (`core.worktree`);
//! - the snapshot ([`Snapshot`]): at the session's start (its start event; for the MCP
//!   server, its own start) the manifest committed at `HEAD` and every file it names (a
//!   Compose file, a dev container's configuration), read from git's objects with each
//!   object hashed against its id ([`super::git`]), kept in the user's state folder
//!   ([`super::session`]). A session with no start event is judged from the snapshot a
//!   person pinned (`hook pin`), or not at all;
//! - the judgement ([`judge`]): the working copy's manifest runs only where every change
//!   it makes to the snapshot's is a proven strengthening ([`super::strengthen`]) and the
//!   files it names are the snapshot's byte for byte. Anything else blocks until a
//!   person allows that exact manifest and those files (`hook allow`, kept in the state
//!   folder by their digest).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::git::Git;
pub use super::git::short;
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

    /// The repository holding `folder`: the nearest folder up from it that holds `.git`
    /// (a folder, or a worktree's file), else the folder itself.
    pub fn around(folder: &Path) -> Result<Repository, String> {
        let folder = std::fs::canonicalize(folder)
            .map_err(|e| format!("cannot read the folder {}: {e}", folder.display()))?;
        let root = folder
            .ancestors()
            .find(|dir| std::fs::symlink_metadata(dir.join(".git")).is_ok())
            .unwrap_or(&folder)
            .to_path_buf();
        let state = state::dir(&root)?;
        Ok(Repository { root, state })
    }

    /// The repository's objects, read and checked.
    pub fn git(&self) -> Git {
        Git::new(&self.root)
    }

    /// The commit `HEAD` names now (none in a repository without commits, or outside git).
    pub fn head(&self) -> Option<String> {
        self.git().head()
    }

    /// Where this repository's files of `kind` are kept in the state folder.
    fn kept(&self, kind: &str) -> PathBuf {
        let root = self.root.to_string_lossy();
        self.state
            .join(kind)
            .join(format!("{}.json", state::key(&[&root])))
    }

    /// Whether a person allowed what `key` names ([`Blocked`]'s) here.
    pub fn allowed(&self, key: &str) -> bool {
        state::read::<Allowances>(&self.kept("allowed"))
            .is_some_and(|a| a.root == self.root && a.digests.iter().any(|d| d == key))
    }

    /// Records that a person allowed what `key` names.
    pub fn allow(&self, key: &str) -> Result<PathBuf, String> {
        let path = self.kept("allowed");
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

    /// The snapshot a person pinned for sessions that send no start event.
    pub fn pinned(&self) -> Option<Snapshot> {
        state::read_large::<Pinned>(&self.kept("pinned"))
            .filter(|p| p.root == self.root)
            .map(|p| p.snapshot)
    }

    /// Pins `snapshot` for sessions that send no start event.
    pub fn pin(&self, snapshot: Snapshot) -> Result<PathBuf, String> {
        let path = self.kept("pinned");
        let pinned = Pinned {
            root: self.root.clone(),
            snapshot,
        };
        state::write(&path, &pinned)
            .map_err(|e| format!("cannot save the pinned manifest in {}: {e}", path.display()))?;
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

/// The snapshot a person pinned in one repository.
#[derive(Debug, Serialize, Deserialize)]
struct Pinned {
    root: PathBuf,
    snapshot: Snapshot,
}

/// The manifest as committed at a commit, and the files it names, read once from git's
/// objects (each checked against its id) and kept: what a session is judged by.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Snapshot {
    /// The commit it was taken at (none: the repository had no commit).
    pub commit: Option<String>,
    /// The manifest's path, relative to the root (none: no manifest was committed).
    pub path: Option<PathBuf>,
    /// The manifest's text as committed.
    pub text: Option<String>,
    /// Each file the manifest named, relative to its folder, as committed.
    pub files: BTreeMap<String, Named>,
}

/// A file a committed manifest names, as the commit had it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Named {
    Absent,
    Text(String),
    Unreadable(String),
}

impl Snapshot {
    /// The manifest committed at `HEAD` of `repo` (`given`, relative to the root, else the
    /// first of [`FILE_NAMES`] at the root, else the root's Cargo.toml table), and the
    /// files it names. A commit whose objects are gone or altered: why.
    pub fn take(
        repo: &Repository,
        given: Option<&Path>,
        dialect: Dialect,
    ) -> Result<Snapshot, String> {
        let Some(commit) = repo.head() else {
            return Ok(Snapshot::default());
        };
        Snapshot::at(repo, &commit, given, dialect)
    }

    /// [`Snapshot::take`] at `commit`.
    pub fn at(
        repo: &Repository,
        commit: &str,
        given: Option<&Path>,
        dialect: Dialect,
    ) -> Result<Snapshot, String> {
        let git = repo.git();
        let at = short(commit);
        let unreadable = |why: String| {
            format!(
                "the manifest cannot be read from commit {at} ({why}), so the gate has nothing to trust"
            )
        };
        let given = given.map(|p| inside_root(&repo.root, p)).transpose()?;
        let mut found = None;
        let candidates: Vec<PathBuf> = match &given {
            Some(path) => vec![path.clone()],
            None => FILE_NAMES.iter().map(PathBuf::from).collect(),
        };
        for path in candidates {
            if let Some(bytes) = git.file(commit, &git_path(&path)).map_err(unreadable)? {
                found = Some((path, bytes));
                break;
            }
        }
        if found.is_none() && given.is_none() {
            let cargo = git.file(commit, "Cargo.toml").map_err(unreadable)?;
            found = cargo
                .filter(|b| String::from_utf8_lossy(b).contains("metadata.verify-matrix"))
                .map(|b| (PathBuf::from("Cargo.toml"), b));
        }
        let Some((path, bytes)) = found else {
            return Ok(Snapshot {
                commit: Some(commit.to_owned()),
                ..Snapshot::default()
            });
        };
        if bytes.len() as u64 > guard::MAX_MANIFEST_BYTES {
            return Err(unreadable(format!(
                "`{}` is larger than {} bytes",
                path.display(),
                guard::MAX_MANIFEST_BYTES
            )));
        }
        let text = guard::text_of(&path, bytes).map_err(|e| e.to_string())?;
        // The files the manifest names, as the commit has them: recorded while it loads.
        let prefix = manifest_folder(&path);
        let recorder = Recorder {
            git: &git,
            commit,
            prefix: &prefix,
            seen: std::cell::RefCell::new(BTreeMap::new()),
        };
        let loaded = load_text(&path, &text, dialect, &recorder);
        if let Err(e) = loaded {
            return Err(format!(
                "the manifest committed at {at} does not load, so the gate has nothing to trust: {e}"
            ));
        }
        Ok(Snapshot {
            commit: Some(commit.to_owned()),
            path: Some(path),
            text: Some(text),
            files: recorder.seen.into_inner(),
        })
    }

    /// The committed manifest, loaded again from the snapshot (`None`: none was
    /// committed).
    pub fn manifest(&self, dialect: Dialect) -> Result<Option<Manifest>, String> {
        let (Some(path), Some(text)) = (&self.path, &self.text) else {
            return Ok(None);
        };
        load_text(path, text, dialect, self)
            .map(Some)
            .map_err(|e| format!("the snapshot of the committed manifest does not load: {e}"))
    }
}

impl NamedFiles for Snapshot {
    fn read(&self, relative: &str) -> Result<Option<Vec<u8>>, String> {
        match self.files.get(relative) {
            Some(Named::Text(text)) => Ok(Some(text.clone().into_bytes())),
            Some(Named::Absent) | None => Ok(None),
            Some(Named::Unreadable(why)) => Err(why.clone()),
        }
    }
}

/// A commit's files, read as a manifest loads and each answer kept.
struct Recorder<'a> {
    git: &'a Git,
    commit: &'a str,
    /// The manifest's folder in the commit's tree (`` at the root).
    prefix: &'a str,
    seen: std::cell::RefCell<BTreeMap<String, Named>>,
}

impl NamedFiles for Recorder<'_> {
    fn read(&self, relative: &str) -> Result<Option<Vec<u8>>, String> {
        let relative = relative.trim_start_matches("./");
        let path = if self.prefix.is_empty() {
            relative.to_owned()
        } else {
            format!("{}/{relative}", self.prefix)
        };
        let answer = self
            .git
            .file(self.commit, &path)
            .and_then(|bytes| match bytes {
                Some(b) if b.len() as u64 > manifest::files::MAX_NAMED_FILE_BYTES => Err(format!(
                    "is larger than {} bytes",
                    manifest::files::MAX_NAMED_FILE_BYTES
                )),
                Some(b) => String::from_utf8(b)
                    .map(|t| Some(t.into_bytes()))
                    .map_err(|_| "is not UTF-8".to_owned()),
                None => Ok(None),
            });
        let kept = match &answer {
            Ok(Some(bytes)) => Named::Text(String::from_utf8_lossy(bytes).into_owned()),
            Ok(None) => Named::Absent,
            Err(why) => Named::Unreadable(why.clone()),
        };
        self.seen.borrow_mut().insert(relative.to_owned(), kept);
        answer
    }
}

/// The manifest `text` read from `path`, its named files from `files`.
fn load_text(
    path: &Path,
    text: &str,
    dialect: Dialect,
    files: &dyn NamedFiles,
) -> Result<Manifest, ManifestError> {
    if path.file_name().is_some_and(|n| n == "Cargo.toml") {
        manifest::from_cargo_toml_text_in(path, text, Some(files))
    } else {
        manifest::from_text_in(path, text, dialect, Some(files))
    }
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
    /// The commit the gate trusts (none: the repository had no commit).
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
/// the committed one, and the key an allowance records.
pub struct Review {
    pub path: PathBuf,
    pub digest: String,
    pub changes: Vec<Change>,
    pub committed: bool,
    pub key: String,
}

/// The working copy of `repo` judged against `snapshot`: what runs, or why nothing may.
pub fn judge(
    repo: &Repository,
    snapshot: &Snapshot,
    given: Option<&Path>,
    dialect: Dialect,
) -> Result<Judged, String> {
    let committed = snapshot.manifest(dialect)?;
    let path = working_path(repo, snapshot, given)?;
    let max_blocks = committed
        .as_ref()
        .map_or(manifest::DEFAULT_MAX_BLOCKS, |m| m.hook.max_blocks);
    let Some(working) = working(repo, &path, dialect)? else {
        return Ok(Judged::Blocked(Blocked {
            path: path.clone(),
            commit: snapshot.commit.clone(),
            max_blocks,
            changes: vec![Change {
                change: format!("the manifest `{}` was removed", path.display()),
                proven: false,
            }],
            key: None,
        }));
    };
    let (changes, key) = changes(repo, snapshot, committed.as_ref(), &working);
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
        commit: snapshot.commit.clone(),
        max_blocks,
        changes,
        key: Some(key),
    }))
}

/// What `hook allow` shows and records: the working copy against the manifest committed
/// at `HEAD`.
pub fn review(repo: &Repository, given: Option<&Path>, dialect: Dialect) -> Result<Review, String> {
    let snapshot = Snapshot::take(repo, given, dialect)?;
    let committed = snapshot.manifest(dialect)?;
    let path = working_path(repo, &snapshot, given)?;
    let working = working(repo, &path, dialect)?
        .ok_or_else(|| format!("there is no manifest `{}` to allow", path.display()))?;
    let (changes, key) = changes(repo, &snapshot, committed.as_ref(), &working);
    Ok(Review {
        path,
        digest: working.digest.clone(),
        changes,
        committed: committed.is_some(),
        key,
    })
}

/// Where the working copy's manifest is: `given`, else where it was committed, else the
/// first of [`FILE_NAMES`] (or the Cargo.toml table) at the root.
fn working_path(
    repo: &Repository,
    snapshot: &Snapshot,
    given: Option<&Path>,
) -> Result<PathBuf, String> {
    Ok(match given {
        Some(path) => inside_root(&repo.root, path)?,
        None => snapshot
            .path
            .clone()
            .or_else(|| working_manifest_path(&repo.root))
            .unwrap_or_else(|| PathBuf::from(FILE_NAMES[0])),
    })
}

/// The changes of `working` against `committed` (none committed: that is the change),
/// with the files the manifests name compared byte for byte, and the key that allows
/// them.
fn changes(
    repo: &Repository,
    snapshot: &Snapshot,
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
        let at = snapshot.commit.as_deref().map_or_else(
            || "the repository had no commit".to_owned(),
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
    for (file, bytes) in working_files {
        let was = snapshot.read(&file);
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

/// The working copy's manifest at `path` (relative to the root): `None` when there is
/// none. A Cargo.toml is read as text (never through `cargo`, which the repository's own
/// toolchain file would choose).
fn working(repo: &Repository, path: &Path, dialect: Dialect) -> Result<Option<Manifest>, String> {
    let full = repo.root.join(path);
    if std::fs::symlink_metadata(&full).is_err() {
        return Ok(None);
    }
    let loaded = if path.file_name().is_some_and(|n| n == "Cargo.toml") {
        guard::read_text(&full).and_then(|text| manifest::from_cargo_toml_text(path, &text))
    } else {
        manifest::load_as(Some(path), &repo.root, dialect)
    };
    match loaded {
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

/// The folder (in the commit's tree) a manifest at `path` describes: its own, or the one
/// above `.github/`.
fn manifest_folder(path: &Path) -> String {
    let parent = path.parent().map(git_path).unwrap_or_default();
    match parent.strip_suffix(".github") {
        Some(above) => above.trim_end_matches('/').to_owned(),
        None => parent,
    }
}

/// `path` as git names it inside a tree (`/` between parts).
fn git_path(path: &Path) -> String {
    path.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}
