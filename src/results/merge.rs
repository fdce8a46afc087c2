//! Collecting the partial results that matrix jobs uploaded as artifacts.
//!
//! Artifacts are produced by pull-request code, so nothing in them is trusted: files
//! are size-bounded before they are read, JSON nesting is bounded by the parser, log
//! paths are resolved only inside the folder their result came from (no `..`, no
//! absolute paths, no symlinks leading out), and every result must come from the same
//! manifest and commit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::manifest::{self, Manifest, ManifestError};

use super::confine::{self, Confined, Prelisted};
use super::io::{Probe, ResultFileError, hand_back, read_bounded_reusing};
use super::journal;
use super::objects;
use super::schema::{CountedChecks, ItemResult, PartialResult, PartialResultOf, READ_VERSIONS};
use compact_str::CompactString;

/// A partial result and where it came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub path: PathBuf,
    pub result: PartialResult,
}

impl Loaded {
    /// The manifest this result embeds (the one it was run from), validated again.
    pub fn embedded_manifest(&self) -> Result<Manifest, ManifestError> {
        let path = Path::new(&self.result.manifest.path);
        let content =
            self.result
                .manifest
                .content
                .value()
                .map_err(|e| ManifestError::Embedded {
                    path: self.path.clone(),
                    message: e.to_string(),
                })?;
        manifest::from_embedded(path, content)
    }
}

/// What `collect` found.
#[derive(Debug, Default)]
pub struct Collected {
    pub partials: Vec<Loaded>,
    /// Files skipped and log paths dropped, for people.
    pub notes: Vec<String>,
}

/// Why the inputs cannot be merged (exit code 4).
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error(transparent)]
    File(#[from] ResultFileError),
    #[error("`{}` does not exist", path.display())]
    NoSuchPath { path: PathBuf },
    #[error("the results come from different manifests:\n{0}")]
    Digests(String),
    #[error("the results come from different commits:\n{0}")]
    Commits(String),
    #[error("the results come from different workflow runs:\n{0}")]
    AllRuns(String),
    #[error(
        "the results embed different manifests under one digest: {files} differ from `{}`",
        first.display()
    )]
    Embedded { first: PathBuf, files: String },
    #[error(
        "`{}` changed while the results were merged: it did not read the second time as it did the first (a shard's checks are read again when its environment's shards are combined)",
        path.display()
    )]
    Changed { path: PathBuf },
    #[error("no partial result files found in {0}")]
    Nothing(String),
    #[error(
        "the results of environment `{environment}` come from different workflow runs:\n{files}"
    )]
    Runs { environment: String, files: String },
    #[error("`{}` claims attempt {attempt} of this workflow run, which is at attempt {current}", path.display())]
    FutureAttempt {
        path: PathBuf,
        attempt: u32,
        current: u32,
    },
}

/// Finds every partial result under `paths` (files, or folders walked recursively in
/// any artifact layout), and makes their log paths relative to `report_dir` where they
/// safely resolve.
pub fn collect(paths: &[PathBuf], report_dir: &Path) -> Result<Collected, MergeError> {
    collect_holding(paths, report_dir, None, false)
}

/// [`collect`] inside workflow run `this_run`, whose results cannot claim a later
/// attempt than its own; each shard's result is held as its facts only (its checks
/// read again when its environment's shards are combined: see [`Held`]), for the
/// report [`Report::build_merged`](super::Report::build_merged) makes of them.
pub fn collect_in(
    paths: &[PathBuf],
    report_dir: &Path,
    this_run: Option<&ThisRun>,
) -> Result<Collected, MergeError> {
    collect_holding(paths, report_dir, this_run, true)
}

fn collect_holding(
    paths: &[PathBuf],
    report_dir: &Path,
    this_run: Option<&ThisRun>,
    hold_shards: bool,
) -> Result<Collected, MergeError> {
    let mut collected = Collected::default();
    let mut files = Vec::new();
    let listed = std::sync::Arc::new(Prelisted::default());
    for path in paths {
        let meta = std::fs::symlink_metadata(path)
            .map_err(|_| MergeError::NoSuchPath { path: path.clone() })?;
        if meta.is_dir() {
            // Each entry of the folder is walked on its own, on every core: an artifact
            // folder holds a thousand logs for each result, and listing them is most
            // of the walk. Each part is walked unsorted (a folder of logs need not be
            // sorted to be passed over), then the results sorted: paths compare
            // component by component, so this is the order of a walk sorted by name.
            let first = files.len();
            let entries: Vec<PathBuf> = match std::fs::read_dir(path) {
                Ok(entries) => entries.flatten().map(|e| e.path()).collect(),
                Err(_) => vec![path.clone()],
            };
            let mut links = Vec::new();
            for (found, linked) in in_parallel(&entries, |entry| json_files(entry, &listed)) {
                files.extend(found);
                links.extend(linked);
            }
            files[first..].sort();
            links.sort();
            for link in links {
                collected
                    .notes
                    .push(format!("skipped `{}`: a symbolic link", link.display()));
            }
        } else if meta.file_type().is_symlink() {
            collected
                .notes
                .push(format!("skipped `{}`: a symbolic link", path.display()));
        } else {
            files.push(path.clone());
        }
    }
    // Each file is read, parsed and confined on its own, so the files are shared out
    // among the cores; what they found is taken in the files' order, so notes and the
    // first error are the same however the work was shared.
    let reading = if hold_shards {
        Reading::Holding
    } else {
        Reading::Whole
    };
    for read in in_parallel(&files, |file| read_one(file, report_dir, &listed, reading)) {
        let (loaded, notes, _) = read?;
        collected.notes.extend(notes);
        collected.partials.extend(loaded);
    }
    if collected.partials.is_empty() {
        let list = paths
            .iter()
            .map(|p| format!("`{}`", p.display()))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(MergeError::Nothing(list));
    }
    // Each environment's latest attempt first (an environment's files from two runs are
    // named as such), then every result must be of one manifest, commit and run.
    let held: Vec<PathBuf> = collected
        .partials
        .iter()
        .filter(|l| l.result.held.is_some())
        .map(|l| l.path.clone())
        .collect();
    keep_latest_attempts(&mut collected, this_run)?;
    let kept: std::collections::HashSet<&Path> = collected
        .partials
        .iter()
        .map(|l| l.path.as_path())
        .collect();
    let dropped: Vec<&PathBuf> = held
        .iter()
        .filter(|p| !kept.contains(p.as_path()))
        .collect();
    drop(kept);
    // A held file left out (an earlier attempt) is still read whole, once: a file
    // read whole at first would have been, and a malformed one is the error it is.
    for read in in_parallel(&dropped, |path| {
        read_one(path, report_dir, &listed, Reading::Whole).map(|(_, notes, _)| notes)
    }) {
        collected.notes.extend(read?);
    }
    agree(&collected.partials)?;
    Ok(collected)
}

/// The `.json` files under `path` (itself, if it is one), and the symbolic links to
/// `.json` names, which are not followed (nor are links to folders, `path` included).
///
/// An artifact folder is mostly logs: a name is looked at before any path is made, so
/// the thousand logs beside each result cost their listing and nothing more, and the
/// listing is kept in `listed` (while there is room), for their paths to be confined
/// without listing them again.
fn json_files(path: &Path, listed: &Prelisted) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut files, mut links) = (Vec::new(), Vec::new());
    let is_json = |name: &std::ffi::OsStr| Path::new(name).extension().is_some_and(|e| e == "json");
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return (files, links);
    };
    if !meta.is_dir() {
        if path.file_name().is_some_and(is_json) {
            if meta.file_type().is_symlink() {
                links.push(path.to_path_buf());
            } else if meta.is_file() {
                files.push(path.to_path_buf());
            }
        }
        return (files, links);
    }
    let mut folders = vec![path.to_path_buf()];
    while let Some(folder) = folders.pop() {
        // The type the listing gives (a `stat` only where it gives none).
        // Each listing built within the room left, and kept (or let go) at once.
        let listing = confine::list_each(&folder, listed.room(), |entry, name, kind| match kind {
            confine::Entry::Folder => folders.push(entry.path()),
            confine::Entry::File if is_json(name) => files.push(entry.path()),
            confine::Entry::Link if is_json(name) => links.push(entry.path()),
            _ => {}
        });
        if let Some(listing) = listing.filter(|l| l.len() >= confine::PRELISTED_FROM) {
            listed.keep([(folder, listing)]);
        }
    }
    (files, links)
}

/// Where a shard's checks are read again, and what they must read as.
///
/// Every shard of every environment is read before the first pair is made (the
/// attempts, the runs and the machines are judged over all files first), and a check
/// split four ways is four times the results: held whole, GitHub's largest matrix split
/// so took four times the memory. So `merge` keeps of each shard only its facts and
/// reads its checks again when its environment's shards are combined, one environment
/// at a time. The second reading must be the first one's file: the same bytes (by
/// SHA-256), the same facts and the same number of checks; anything else stops the
/// merge with the error the file is ([`MergeError::Changed`], or the one a whole
/// reading gives a malformed file), never a shard left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    path: PathBuf,
    report_dir: PathBuf,
    /// The listings the walk kept, for its logs' paths to be confined.
    listed: std::sync::Arc<Prelisted>,
    /// The SHA-256 of the file's bytes when it was first read.
    bytes_digest: Digest,
    /// How many checks it had (its journal's included).
    checks: usize,
    /// Whether it was read whole the first time, which gave its notes.
    noted: bool,
    /// Whether every check it had passed (read whole the first time; a GitLab job's
    /// result is, for its job's status to be checked against).
    all_passed: bool,
}

impl PartialResult {
    /// Whether every check of this result passed, held or not.
    pub fn all_passed(&self) -> bool {
        match &self.held {
            Some(held) => held.all_passed,
            None => self.checks.iter().all(|c| c.status == super::Status::Pass),
        }
    }
}

/// The shard result `facts` (held by [`collect_in`]) with its checks, read again from
/// its file, and the notes their reading gave; the error its file is when it does not
/// read as it did the first time (malformed, or changed since).
pub(super) fn reread(facts: &PartialResult) -> Result<(PartialResult, Vec<String>), MergeError> {
    let Some(held) = facts.held.as_deref() else {
        return Ok((facts.clone(), Vec::new()));
    };
    let changed = || MergeError::Changed {
        path: held.path.clone(),
    };
    let read = read_one(&held.path, &held.report_dir, &held.listed, Reading::Again)?;
    let (loaded, notes, digest) = match read {
        (Some(loaded), notes, Some(digest)) => (loaded, notes, digest),
        // Its facts were read the first time: not one when read whole, it is not valid.
        _ => {
            return Err(MergeError::File(ResultFileError::Invalid {
                path: held.path.clone(),
                message: "it is not a partial result when it is read whole".to_owned(),
            }));
        }
    };
    let mut result = loaded.result;
    let checks = std::mem::take(&mut result.checks);
    result.held = facts.held.clone();
    if digest != held.bytes_digest || checks.len() != held.checks || result != *facts {
        return Err(changed());
    }
    result.checks = checks;
    result.held = None;
    // Read whole the first time, its notes were given then.
    Ok((result, if held.noted { Vec::new() } else { notes }))
}

/// Whether `file` is named as `run --shard` names a shard's result
/// (`verify-matrix-ENV@KofN.json`): only which way to read it first, never taken as
/// what it is (its facts say that).
fn named_as_shard(file: &Path) -> bool {
    file.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("verify-matrix-") && n.contains('@'))
}

/// A shard's result read as its facts only, its checks counted (and read again when its
/// environment's shards are combined: see [`Held`]); `None` when it is anything else
/// (not a shard, another version, malformed, or with a journal to replay), which the
/// whole reading then sorts out and words.
fn held_facts(
    file: &Path,
    report_dir: &Path,
    listed: &std::sync::Arc<Prelisted>,
    bytes: &[u8],
) -> Option<PartialResult> {
    let facts: PartialResultOf<CountedChecks> = objects::from_slice(bytes).ok()?;
    // A GitLab job's result is read whole: its job's status is checked against whether
    // every check passed.
    if !READ_VERSIONS.contains(&facts.format_version)
        || facts.shard.is_none()
        || facts.unfinished()
        || facts.runner.gitlab.is_some()
    {
        return None;
    }
    let checks = facts.checks.0;
    let mut result = facts.with_checks(Vec::new());
    result.held = Some(Box::new(Held {
        path: file.to_path_buf(),
        report_dir: report_dir.to_path_buf(),
        listed: listed.clone(),
        bytes_digest: digest_of(bytes),
        checks,
        noted: false,
        all_passed: false,
    }));
    Some(result)
}

/// The SHA-256 of a file's bytes.
type Digest = [u8; 32];

fn digest_of(bytes: &[u8]) -> Digest {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).into()
}

/// What [`read_one`] read: the result (`None` when the file is not one), the notes, and
/// the digest of the file's bytes when it is held or read again.
type OneRead = (Option<Loaded>, Vec<String>, Option<Digest>);

/// How [`read_one`] reads a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// Whole.
    Whole,
    /// A shard's result held as its facts ([`Held`]), any other whole.
    Holding,
    /// Whole, again, with the digest of its bytes.
    Again,
}

/// Reads one file: `None` (with a note) when it is not a partial result; the digest of
/// its bytes when it is held or read again.
fn read_one(
    file: &Path,
    report_dir: &Path,
    listed: &std::sync::Arc<Prelisted>,
    reading: Reading,
) -> Result<OneRead, MergeError> {
    // Only a regular file is read twice (a FIFO would wait for another writer).
    let hold = reading == Reading::Holding && std::fs::metadata(file).is_ok_and(|m| m.is_file());
    let bytes = read_bounded_reusing(file)?;
    let read = read_bytes(file, &bytes, report_dir, listed, reading, hold);
    hand_back(bytes);
    read
}

/// [`read_one`] of `file`, whose bytes are `bytes`; `hold`: whether it may be held.
fn read_bytes(
    file: &Path,
    bytes: &[u8],
    report_dir: &Path,
    listed: &std::sync::Arc<Prelisted>,
    reading: Reading,
    hold: bool,
) -> Result<OneRead, MergeError> {
    let mut notes = Vec::new();
    if hold
        && named_as_shard(file)
        && let Some(result) = held_facts(file, report_dir, listed, bytes)
    {
        let loaded = Loaded {
            path: file.to_path_buf(),
            result,
        };
        return Ok((Some(loaded), notes, None));
    }
    let mut result = match objects::from_slice::<PartialResult>(bytes) {
        // The common case, in one pass: a partial result of the version this build writes.
        Ok(result) if READ_VERSIONS.contains(&result.format_version) => result,
        // Anything else is probed first, for the right note or error.
        _ => match probe_partial(file, bytes)? {
            Some(result) => result,
            None => {
                notes.push(format!(
                    "skipped `{}`: not a cargo-verify-matrix partial result",
                    file.display()
                ));
                return Ok((None, notes, None));
            }
        },
    };
    // An interrupted result is never held: its journal, read beside it, could read
    // otherwise the second time.
    let hold = hold && result.shard.is_some() && !result.unfinished();
    let digest = (hold || reading == Reading::Again).then(|| digest_of(bytes));
    let replayed = journal::replay(file, &mut result)?;
    if replayed > 0 {
        notes.push(format!(
            "`{}` is from a run that did not finish: {replayed} finished check{} read from its journal",
            file.display(),
            if replayed == 1 { "" } else { "s" }
        ));
    }
    confine_logs(file, &mut result, report_dir, listed, &mut notes);
    forget_merged_shards(&mut result);
    if let (true, Some(digest)) = (hold, digest) {
        result.held = Some(Box::new(Held {
            path: file.to_path_buf(),
            report_dir: report_dir.to_path_buf(),
            listed: listed.clone(),
            bytes_digest: digest,
            checks: result.checks.len(),
            noted: true,
            all_passed: result.all_passed(),
        }));
        result.checks = Vec::new();
    }
    let loaded = Loaded {
        path: file.to_path_buf(),
        result,
    };
    Ok((Some(loaded), notes, digest))
}

/// Drops from a run's result what only a merge writes of a split check's shards (each
/// shard's part, the overlap): a result claiming them made them up, and the grid, the
/// reasons and the history would show them.
fn forget_merged_shards(result: &mut PartialResult) {
    for check in &mut result.checks {
        if let Some(sharded) = &mut check.sharded {
            sharded.parts.clear();
            sharded.overlapped.clear();
            sharded.overlap_count = 0;
            if sharded.slice.is_none() && sharded.split.is_none() {
                check.sharded = None;
            }
        }
    }
}

/// `bytes` as a partial result, its keys probed first so that what is not one is
/// `None`, and one of another version a clear error.
fn probe_partial(file: &Path, bytes: &[u8]) -> Result<Option<PartialResult>, MergeError> {
    let probe = Probe::read(file, bytes)?.filter(|p| {
        p.format_version.is_some()
            && p.environment.is_some()
            && p.checks.is_some()
            && p.manifest.is_some()
    });
    match probe {
        Some(probe) => Ok(Some(probe.parse(file, bytes)?)),
        None => Ok(None),
    }
}

/// `work` applied to every item, on as many threads as there are cores (at most one
/// per item), the answers in the items' order.
pub(super) fn in_parallel<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(items.len());
    if threads <= 1 {
        return items.iter().map(work).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut answers: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        mine.push((i, work(item)));
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| {
                w.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    answers.sort_unstable_by_key(|(i, _)| *i);
    answers.into_iter().map(|(_, r)| r).collect()
}

/// [`in_parallel`] of `items` each given to `work` whole (moved, not lent).
pub(super) fn in_parallel_owned<T: Send, R: Send>(
    items: Vec<T>,
    work: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    let slots: Vec<std::sync::Mutex<Option<T>>> = items
        .into_iter()
        .map(|item| std::sync::Mutex::new(Some(item)))
        .collect();
    // Each slot is handed to one thread once, so each is taken once, and full.
    in_parallel(&slots, |slot| {
        slot.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
            .map(&work)
    })
    .into_iter()
    .flatten()
    .collect()
}

/// A re-run ("Re-run failed jobs") is a later attempt of the same workflow run: per
/// environment, only the files of its latest `source.run_attempt` count (between files
/// without an attempt, as local runs write, the last `finished_at`), and the earlier
/// ones are noted. Two files of one attempt are both kept (a run writes one per
/// environment: if they differ, that is a conflict). Files of one environment from
/// different runs cannot be ordered, and a file of `this_run` claiming an attempt it has
/// not reached is forged: both refused.
fn keep_latest_attempts(
    collected: &mut Collected,
    this_run: Option<&ThisRun>,
) -> Result<(), MergeError> {
    let mut by_env: BTreeMap<&str, Vec<&Loaded>> = BTreeMap::new();
    for loaded in &collected.partials {
        let source = &loaded.result.source;
        if let (Some(run), Some(id), Some(attempt)) =
            (this_run, source.run_id.as_deref(), source.run_attempt)
            && run.id == id
            && attempt > run.attempt
        {
            return Err(MergeError::FutureAttempt {
                path: loaded.path.clone(),
                attempt,
                current: run.attempt,
            });
        }
        by_env
            .entry(loaded.result.environment.as_str())
            .or_default()
            .push(loaded);
    }
    let mut dropped: Vec<PathBuf> = Vec::new();
    let mut notes = Vec::new();
    for (env, files) in &by_env {
        let runs: std::collections::BTreeSet<Option<&str>> = files
            .iter()
            .map(|l| l.result.source.run_id.as_deref())
            .collect();
        if runs.len() > 1 {
            let files = files
                .iter()
                .map(|l| {
                    format!(
                        "  run {}: `{}`",
                        l.result.source.run_id.as_deref().unwrap_or("(none)"),
                        l.path.display()
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            return Err(MergeError::Runs {
                environment: (*env).to_owned(),
                files,
            });
        }
        // Each shard is re-run on its own ("Re-run failed jobs" re-runs the failed
        // shard): the latest attempt is taken per shard.
        let mut by_shard: BTreeMap<Option<u32>, Vec<&Loaded>> = BTreeMap::new();
        for loaded in files {
            by_shard
                .entry(loaded.result.shard.map(|s| s.index))
                .or_default()
                .push(loaded);
        }
        for (shard, files) in by_shard {
            let Some(latest) = files.iter().map(|l| attempt_key(l)).max() else {
                continue;
            };
            let what = match shard {
                Some(k) => format!("shard {k} of environment `{env}`"),
                None => format!("environment `{env}`"),
            };
            for loaded in files.iter().filter(|l| attempt_key(l) != latest) {
                notes.push(format!(
                    "ignored `{}`: an earlier attempt of {what} ({}) than the latest ({})",
                    loaded.path.display(),
                    describe_attempt(loaded),
                    describe_attempt(
                        files
                            .iter()
                            .find(|l| attempt_key(l) == latest)
                            .unwrap_or(loaded)
                    ),
                ));
                dropped.push(loaded.path.clone());
            }
        }
    }
    collected.partials.retain(|l| !dropped.contains(&l.path));
    collected.notes.extend(notes);
    Ok(())
}

/// The workflow run a merge happens in (`GITHUB_RUN_ID`, `GITHUB_RUN_ATTEMPT`): its
/// results cannot come from a later attempt than its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThisRun {
    pub id: String,
    pub attempt: u32,
}

/// How a result file sorts among the files of its environment: the attempt (under
/// GitLab, the job's id: a retried job is a later job), and only without one (local
/// runs) the time it finished. Two files of one job are one attempt: both kept, never
/// one taken over the other because it says it finished later.
fn attempt_key(loaded: &Loaded) -> (Option<u64>, Option<&str>) {
    match attempt_of(loaded) {
        Some(attempt) => (Some(attempt), None),
        None => (None, loaded.result.finished_at.as_deref()),
    }
}

fn attempt_of(loaded: &Loaded) -> Option<u64> {
    let result = &loaded.result;
    result
        .source
        .run_attempt
        .map(u64::from)
        .or_else(|| result.runner.gitlab.as_ref().and_then(|job| job.job_id))
}

fn describe_attempt(loaded: &Loaded) -> String {
    let result = &loaded.result;
    match (result.source.run_attempt, attempt_of(loaded)) {
        (Some(attempt), _) => format!("attempt {attempt}"),
        (None, Some(job)) => format!("job {job}"),
        (None, None) => format!(
            "finished {}",
            result.finished_at.as_deref().unwrap_or("never")
        ),
    }
}

/// Every result must name the same manifest digest and embed the same manifest, and
/// come from the same commit and workflow run: a result that records none where others
/// do is not of theirs.
fn agree(partials: &[Loaded]) -> Result<(), MergeError> {
    let group = |key: &dyn Fn(&Loaded) -> String| {
        let mut by: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for p in partials {
            by.entry(key(p))
                .or_default()
                .push(format!("`{}`", p.path.display()));
        }
        by
    };
    let render = |by: BTreeMap<String, Vec<String>>| {
        by.into_iter()
            .map(|(k, files)| format!("  {k}: {}", files.join(", ")))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let digests = group(&|p| p.result.manifest.digest.clone());
    if digests.len() > 1 {
        return Err(MergeError::Digests(render(digests)));
    }
    if let Some(first) = partials.first() {
        let differ: Vec<String> = partials
            .iter()
            .filter(|p| p.result.manifest.content != first.result.manifest.content)
            .map(|p| format!("`{}`", p.path.display()))
            .collect();
        if !differ.is_empty() {
            return Err(MergeError::Embedded {
                first: first.path.clone(),
                files: differ.join(", "),
            });
        }
    }
    let none = || "(none recorded)".to_owned();
    let commits = group(&|p| p.result.source.commit.clone().unwrap_or_else(none));
    if commits.len() > 1 {
        return Err(MergeError::Commits(render(commits)));
    }
    let runs = group(&|p| p.result.source.run_id.clone().unwrap_or_else(none));
    if runs.len() > 1 {
        return Err(MergeError::AllRuns(render(runs)));
    }
    Ok(())
}

/// Rewrites each check's `log_path` (and its group items') to be relative to
/// `report_dir`, keeping it only when it resolves inside the result file's own folder.
fn confine_logs(
    file: &Path,
    result: &mut PartialResult,
    report_dir: &Path,
    listed: &std::sync::Arc<Prelisted>,
    notes: &mut Vec<String>,
) {
    let dir = file.parent().unwrap_or(Path::new("."));
    let confined = Confined::with(dir, Some(listed.clone()));
    let canonical_report = std::fs::canonicalize(report_dir).ok();
    let prefix = confined
        .canonical()
        .zip(canonical_report.as_deref())
        .and_then(|(dir, report)| dir.strip_prefix(report).ok())
        .map(|relative| {
            let mut prefix = relative.to_string_lossy().replace('\\', "/");
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix
        });
    let mut logs = Logs {
        file,
        confined,
        canonical_report,
        prefix,
        notes,
        outside: 0,
    };
    for check in &mut result.checks {
        let id = check.command_id.clone();
        check.log_path = logs.rebase(check.log_path.take(), &id);
        ItemResult::visit_mut(&mut check.items, &id, &mut |item, path| {
            item.log_path = logs.rebase(item.log_path.take(), path);
        });
    }
    // One note for the file, not one per log.
    if logs.outside > 0 {
        let n = logs.outside;
        logs.notes.push(format!(
            "{n} {} of `{}` {} outside the report's folder `{}`; {} not linked (write the report beside the results to link them)",
            if n == 1 { "log" } else { "logs" },
            file.display(),
            if n == 1 { "is" } else { "are" },
            report_dir.display(),
            if n == 1 { "it is" } else { "they are" },
        ));
    }
}

/// Log paths of one result file, made relative to the report's folder.
struct Logs<'a> {
    file: &'a Path,
    confined: Confined,
    canonical_report: Option<PathBuf>,
    /// The result file's folder relative to the report's, `/`-separated and ending
    /// with `/` (empty when they are one); `None` when it is not under the report's.
    prefix: Option<String>,
    notes: &'a mut Vec<String>,
    /// Logs outside the report's folder, said once for the file.
    outside: usize,
}

impl Logs<'_> {
    /// `log` (of check `id`) relative to the report's folder, if it stays inside the
    /// result file's folder and is under the report's.
    fn rebase(&mut self, log: Option<CompactString>, id: &str) -> Option<CompactString> {
        let log = log?;
        if !self.confined.contains(&log) {
            self.notes.push(format!(
                "ignored log path `{log}` of {id} in `{}`: it does not resolve inside that folder",
                self.file.display()
            ));
            return None;
        }
        // A plain path of names (as this tool writes them) is the folder's prefix and
        // itself: no path is built and taken apart again for each of a matrix's logs.
        let plain = !log.contains('\\')
            && log
                .split('/')
                .all(|part| !part.is_empty() && part != "." && part != "..");
        if plain {
            return match &self.prefix {
                Some(prefix) => {
                    let mut rebased = CompactString::with_capacity(prefix.len() + log.len());
                    rebased.push_str(prefix);
                    rebased.push_str(&log);
                    Some(rebased)
                }
                None => {
                    self.outside += 1;
                    None
                }
            };
        }
        let absolute = self.confined.canonical().map(|d| d.join(log.as_str()));
        let rebased = absolute
            .zip(self.canonical_report.as_ref())
            .and_then(|(abs, report)| {
                abs.strip_prefix(report)
                    .ok()
                    .map(|r| r.to_string_lossy().replace('\\', "/").into())
            });
        if rebased.is_none() {
            self.outside += 1;
        }
        rebased
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shard's result as `run --shard 1/2` writes it, with one check.
    const SHARD: &str = r#"{"format_version":2,"tool":{"name":"cargo-verify-matrix","version":"0.1.0"},"manifest":{"path":"verify-matrix.yml","digest":"sha256:00","content":{"version":1}},"environment":"linux","shard":{"index":1,"count":2},"source":{"repository":null,"commit":null,"pr":null,"run_id":null,"run_attempt":null,"job":null},"runner":{"os":"linux","arch":"x86_64"},"started_at":"2026-11-28T09:19:32Z","finished_at":"2026-11-28T09:19:34Z","duration_ms":2487,"outcome":"complete","checks":[{"command_id":"unit","environment":"linux","kind":"run","command":"true","cwd":".","required":true,"must_be_effective":false,"gate_type":"custom","status":"PASS","exit_code":0,"required_exit_code":0,"duration_ms":3,"log_path":null,"gate_effective":true,"tests_executed":null,"test_counts":null,"ineffective_reason":null,"summary":"passed (exit 0) in 3ms","retryable":false,"attempts":1,"flaky":false,"timed_out":false,"leaked":[],"refused":null}]}"#;

    /// The shard in `dir` under `name`, as `merge` holds it: its facts alone.
    fn held(dir: &Path, name: &str) -> PartialResult {
        std::fs::write(dir.join(name), SHARD).unwrap();
        let collected = collect_in(&[dir.to_path_buf()], dir, None).unwrap();
        let [loaded] = <[Loaded; 1]>::try_from(collected.partials).unwrap();
        assert!(loaded.result.checks.is_empty(), "{name}: its checks let go");
        assert!(loaded.result.held.is_some(), "{name}: held");
        loaded.result
    }

    #[test]
    fn a_held_shard_is_read_again_only_as_it_was_first_read() {
        for name in ["verify-matrix-linux@1of2.json", "renamed.json"] {
            let dir = tempfile::tempdir().unwrap();
            let facts = held(dir.path(), name);
            let (again, notes) = reread(&facts).unwrap();
            assert_eq!(again.checks.len(), 1);
            assert_eq!(again.checks[0].command_id, "unit");
            assert!(again.held.is_none() && notes.is_empty());

            // The same facts and checks, one byte more: not the file first read.
            std::fs::write(dir.path().join(name), format!("{SHARD} ")).unwrap();
            let error = reread(&facts).unwrap_err();
            assert!(matches!(error, MergeError::Changed { .. }), "{error}");
            assert!(error.to_string().contains(name), "{error}");

            // Malformed the second time: the error the file is, as a whole reading says it.
            let broken = SHARD.replace("\"checks\":[{", "\"checks\":[1,{");
            std::fs::write(dir.path().join(name), broken).unwrap();
            let error = reread(&facts).unwrap_err();
            assert!(
                error.to_string().contains("is not valid") && error.to_string().contains(name),
                "{error}"
            );
        }
    }

    #[test]
    fn what_is_not_a_finished_shard_in_a_regular_file_is_read_whole() {
        // An unfinished one too, whose journal (beside it) could read otherwise later.
        let dir = tempfile::tempdir().unwrap();
        let whole = SHARD.replace("\"shard\":{\"index\":1,\"count\":2},", "");
        let interrupted = SHARD
            .replace(
                "\"finished_at\":\"2026-11-28T09:19:34Z\"",
                "\"finished_at\":null",
            )
            .replace("\"outcome\":\"complete\"", "\"outcome\":\"interrupted\"");
        for (name, text) in [
            ("verify-matrix-linux@1of2.json", whole.as_str()),
            ("verify-matrix-linux@2of2.json", interrupted.as_str()),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            let listed = std::sync::Arc::default();
            let (loaded, _, _) = read_one(&path, dir.path(), &listed, Reading::Holding).unwrap();
            let result = loaded.unwrap().result;
            assert!(result.held.is_none(), "{name}");
            assert_eq!(result.checks.len(), 1, "{name}");
        }
    }
}
