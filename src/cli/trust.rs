//! What the coding-agent gate trusts, and what it refuses: an agent in a hurry can edit
//! any file of its worktree, the manifest included, so the gate judges by the manifest
//! as it was **committed** when the session began, found from the **repository root**
//! (never from the session's folder downwards, where a decoy could sit).
//!
//! - The root: `git rev-parse --show-toplevel` from the project folder the client starts
//!   the hook in (`CLAUDE_PROJECT_DIR` when set, else the hook's own folder); the
//!   session's `cwd` in the hook's input is not used.
//! - The commit: `HEAD` when the session first reached the gate (its `SessionStart`
//!   event when the client sends one, else its first stop), kept in the user's state
//!   folder outside the repository ([`super::state`]).
//! - The working copy's manifest may strengthen the committed one (checks added,
//!   `min-tests` raised, …) and is then what runs. Any weakening — and any change to what
//!   a required check runs, or to the `hook:` section ([`crate::manifest::compare::gate_changes`])
//!   — blocks the stop and is told to the person, until the person allows that exact
//!   manifest (`hook allow`, an allowance kept in the state folder by its digest).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

use super::Error;
use super::settings::Settings;
use super::state;
use crate::manifest::compare::{ManifestChange, gate_changes};
use crate::manifest::{self, FILE_NAMES, Manifest, ManifestError, guard};

/// The repository the gate judges: its root folder and the user's state folder for it.
pub(crate) struct Repository {
    /// The root (canonical).
    pub root: PathBuf,
    /// The state folder (outside the root).
    pub state: PathBuf,
}

impl Repository {
    /// The repository around the project folder the client started the gate in.
    pub fn of_project() -> Result<Repository, Error> {
        let project = std::env::var_os("CLAUDE_PROJECT_DIR")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute() && p.is_dir())
            .map_or_else(super::settings::current_dir, Ok)?;
        Repository::around(&project)
    }

    /// The repository holding `folder` (the folder itself when it is in none).
    pub fn around(folder: &Path) -> Result<Repository, Error> {
        let top = git(folder, &["rev-parse", "--show-toplevel"])
            .and_then(|out| String::from_utf8(out).ok())
            .map(|text| PathBuf::from(text.trim_end_matches(['\n', '\r'])))
            .filter(|p| p.is_dir())
            .unwrap_or_else(|| folder.to_path_buf());
        let root = std::fs::canonicalize(&top).map_err(|source| Error::Io {
            context: format!("cannot read the repository folder {}", top.display()),
            source,
        })?;
        let state = state::dir(&root)?;
        Ok(Repository { root, state })
    }

    /// The commit `HEAD` names now (none in a repository without commits, or outside git).
    pub fn head(&self) -> Option<String> {
        let out = git(
            &self.root,
            &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
        )?;
        let sha = String::from_utf8(out).ok()?.trim().to_owned();
        (!sha.is_empty()).then_some(sha)
    }

    /// Where the allowances of this repository are kept.
    fn allowances_path(&self) -> PathBuf {
        let root = self.root.to_string_lossy();
        self.state
            .join("allowed")
            .join(format!("{}.json", state::key(&[&root])))
    }

    /// Whether a person allowed the manifest whose digest is `digest` here.
    pub fn allowed(&self, digest: &str) -> bool {
        state::read::<Allowances>(&self.allowances_path())
            .is_some_and(|a| a.root == self.root && a.digests.iter().any(|d| d == digest))
    }

    /// Records that a person allowed the manifest whose digest is `digest`.
    pub fn allow(&self, digest: &str) -> Result<PathBuf, Error> {
        let path = self.allowances_path();
        let mut allowances = state::read::<Allowances>(&path)
            .filter(|a| a.root == self.root)
            .unwrap_or_else(|| Allowances {
                root: self.root.clone(),
                digests: Vec::new(),
            });
        if !allowances.digests.iter().any(|d| d == digest) {
            allowances.digests.push(digest.to_owned());
        }
        // The newest few: an allowance is for the change at hand, not a collection.
        let excess = allowances.digests.len().saturating_sub(MAX_ALLOWANCES);
        allowances.digests.drain(..excess);
        state::write(&path, &allowances).map_err(|e| {
            Error::Usage(format!(
                "cannot save the allowance in {}: {e}",
                path.display()
            ))
        })?;
        Ok(path)
    }
}

/// The most manifests remembered as allowed in one repository.
const MAX_ALLOWANCES: usize = 20;

/// A person's allowances in one repository: the digests of the manifests they allowed.
#[derive(Debug, Serialize, Deserialize)]
struct Allowances {
    root: PathBuf,
    digests: Vec<String>,
}

/// The manifest the gate found, as committed and as in the working copy.
pub(crate) struct Manifests {
    /// The path of the manifest, relative to the root (as committed, else as found).
    pub path: PathBuf,
    /// The copy committed at the trusted commit (none without a commit, or when the
    /// commit has no manifest).
    pub committed: Option<Manifest>,
    /// The working copy.
    pub working: Result<Manifest, Error>,
}

/// What the gate judges by.
pub(crate) enum Judged {
    /// This manifest runs; the notes are for the person.
    Run {
        manifest: Box<Manifest>,
        notes: Vec<String>,
    },
    /// The working copy weakens the committed manifest and no person allowed it.
    Weakened {
        committed: Box<Manifest>,
        changes: Vec<ManifestChange>,
    },
}

impl Manifests {
    /// The manifest of `repo` (`given`, relative to the root, else the first of
    /// [`FILE_NAMES`] at the root, else the root's Cargo.toml table), at `commit` and in
    /// the working copy.
    pub fn find(
        settings: &Settings,
        repo: &Repository,
        commit: Option<&str>,
        given: Option<&Path>,
    ) -> Result<Manifests, Error> {
        let given = match given {
            Some(path) => Some(inside_root(&repo.root, path)?),
            None => None,
        };
        let committed_path = match (&given, commit) {
            (Some(path), Some(_)) => Some(path.clone()),
            (None, Some(commit)) => committed_manifest_path(&repo.root, commit),
            (_, None) => None,
        };
        let committed = match (&committed_path, commit) {
            (Some(path), Some(commit)) => read_committed(settings, &repo.root, commit, path)?,
            _ => None,
        };
        let path = given
            .or_else(|| committed.as_ref().and(committed_path.clone()))
            .or_else(|| working_manifest_path(&repo.root));
        let working = match &path {
            Some(path) if repo.root.join(path).is_file() => {
                settings.load_manifest_from(Some(path), &repo.root)
            }
            _ => Err(Error::Manifest(ManifestError::NotFound {
                start: repo.root.clone(),
                top: repo.root.clone(),
            })),
        };
        Ok(Manifests {
            path: path.unwrap_or_else(|| PathBuf::from(FILE_NAMES[0])),
            committed,
            working,
        })
    }

    /// What to judge by: the working copy when it is the committed manifest or only
    /// strengthens it (or when nothing was committed, or a person allowed it); else the
    /// weakening, to be refused.
    pub fn judge(self, repo: &Repository, commit: Option<&str>) -> Result<Judged, Error> {
        let path = self.path.display().to_string();
        let Some(committed) = self.committed else {
            let at = match commit {
                Some(commit) => format!("at {}", short(commit)),
                None => "(the repository has no commit)".to_owned(),
            };
            return Ok(Judged::Run {
                manifest: Box::new(self.working?),
                notes: vec![format!(
                    "no manifest that loads was committed {at}, so the working copy's `{path}` was used as it is"
                )],
            });
        };
        let working = match self.working {
            Ok(working) => working,
            Err(Error::Manifest(ManifestError::NotFound { .. })) => {
                return Ok(Judged::Weakened {
                    committed: Box::new(committed),
                    changes: vec![ManifestChange {
                        check: None,
                        change: format!("the manifest `{path}` was removed"),
                        weakens: true,
                    }],
                });
            }
            Err(e) => return Err(e),
        };
        if working.digest == committed.digest {
            return Ok(Judged::Run {
                manifest: Box::new(working),
                notes: Vec::new(),
            });
        }
        let changes = gate_changes(&committed, &working);
        let weakens = changes.iter().any(|c| c.weakens);
        if weakens && !repo.allowed(&working.digest) {
            return Ok(Judged::Weakened {
                committed: Box::new(committed),
                changes,
            });
        }
        let listed: Vec<&str> = changes.iter().map(|c| c.change.as_str()).collect();
        let note = if weakens {
            format!(
                "a person allowed the changes to `{path}`: {}",
                listed.join("; ")
            )
        } else {
            format!(
                "`{path}` strengthens the committed manifest: {}",
                listed.join("; ")
            )
        };
        Ok(Judged::Run {
            manifest: Box::new(working),
            notes: vec![note],
        })
    }
}

/// `path` relative to `root`; an absolute path must lie inside it.
fn inside_root(root: &Path, path: &Path) -> Result<PathBuf, Error> {
    let relative = if path.is_absolute() {
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        real.strip_prefix(root)
            .map(Path::to_path_buf)
            .map_err(|_| {
                Error::Usage(format!(
                    "--manifest {} is outside the repository {}",
                    path.display(),
                    root.display()
                ))
            })?
    } else {
        path.to_path_buf()
    };
    if relative
        .components()
        .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Err(Error::Usage(format!(
            "--manifest {} must be a path inside the repository, relative to its root {}",
            path.display(),
            root.display()
        )));
    }
    Ok(relative)
}

/// The first of [`FILE_NAMES`] at the root of `commit`, else its Cargo.toml when that
/// holds the table.
fn committed_manifest_path(root: &Path, commit: &str) -> Option<PathBuf> {
    let exists = |name: &str| git(root, &["cat-file", "-e", &format!("{commit}:{name}")]).is_some();
    FILE_NAMES
        .iter()
        .find(|name| exists(name))
        .map(PathBuf::from)
        .or_else(|| {
            let cargo = git(root, &["cat-file", "blob", &format!("{commit}:Cargo.toml")])?;
            String::from_utf8_lossy(&cargo)
                .contains("metadata.verify-matrix")
                .then(|| PathBuf::from("Cargo.toml"))
        })
}

/// The first of [`FILE_NAMES`] at the root of the working copy, else its Cargo.toml when
/// that holds the table.
fn working_manifest_path(root: &Path) -> Option<PathBuf> {
    FILE_NAMES
        .iter()
        .map(PathBuf::from)
        .find(|name| root.join(name).is_file())
        .or_else(|| {
            let text = std::fs::read_to_string(root.join("Cargo.toml")).ok()?;
            text.contains("metadata.verify-matrix")
                .then(|| PathBuf::from("Cargo.toml"))
        })
}

/// The manifest at `path` as committed at `commit`, read within the manifest's size
/// bound; none when the commit has no such file, or one that does not load (there is
/// nothing to weaken then: the working copy is judged as it is, its errors included).
fn read_committed(
    settings: &Settings,
    root: &Path,
    commit: &str,
    path: &Path,
) -> Result<Option<Manifest>, Error> {
    let spec = format!("{commit}:{}", git_path(path));
    let Some(size) = git(root, &["cat-file", "-s", &spec]) else {
        return Ok(None);
    };
    let size: u64 = String::from_utf8_lossy(&size)
        .trim()
        .parse()
        .unwrap_or(u64::MAX);
    if size > guard::MAX_MANIFEST_BYTES {
        return Err(ManifestError::TooLarge {
            path: path.to_path_buf(),
            limit: guard::MAX_MANIFEST_BYTES,
        }
        .into());
    }
    let bytes = git(root, &["cat-file", "blob", &spec]).ok_or_else(|| {
        Error::Usage(format!(
            "cannot read `{}` as committed at {}",
            path.display(),
            short(commit)
        ))
    })?;
    let text = guard::text_of(path, bytes)?;
    let committed = if path.file_name().is_some_and(|n| n == "Cargo.toml") {
        manifest::from_cargo_toml_text(path, &text)
    } else {
        manifest::from_text_as(path, &text, settings.dialect)
    };
    Ok(committed.ok())
}

/// `path` as git names it inside a tree (`/` between parts).
fn git_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The first 12 characters of a commit id.
pub(crate) fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// `git ARGS` in `dir`: its stdout when it succeeds.
fn git(dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}
