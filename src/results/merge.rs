//! Collecting the partial results that matrix jobs uploaded as artifacts.
//!
//! Artifacts are produced by pull-request code, so nothing in them is trusted: files
//! are size-bounded before they are read, JSON nesting is bounded by the parser, log
//! paths are resolved only inside the folder their result came from (no `..`, no
//! absolute paths, no symlinks leading out), and every result must come from the same
//! manifest and commit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use walkdir::WalkDir;

use crate::manifest::{self, Manifest, ManifestError};

use super::confine::Confined;
use super::io::{Probe, ResultFileError, read_bounded};
use super::journal;
use super::schema::{ItemResult, PartialResult, READ_VERSIONS};
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
    collect_in(paths, report_dir, None)
}

/// [`collect`] inside workflow run `this_run`, whose results cannot claim a later
/// attempt than its own.
pub fn collect_in(
    paths: &[PathBuf],
    report_dir: &Path,
    this_run: Option<&ThisRun>,
) -> Result<Collected, MergeError> {
    let mut collected = Collected::default();
    let mut files = Vec::new();
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
            for (found, linked) in in_parallel(&entries, |entry| json_files(entry)) {
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
    for read in in_parallel(&files, |file| read_one(file, report_dir)) {
        let (loaded, notes) = read?;
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
    keep_latest_attempts(&mut collected, this_run)?;
    agree(&collected.partials)?;
    Ok(collected)
}

/// The `.json` files under `path` (itself, if it is one), and the symbolic links to
/// `.json` names, which are not followed.
fn json_files(path: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut files, mut links) = (Vec::new(), Vec::new());
    for entry in WalkDir::new(path)
        .follow_links(false)
        .follow_root_links(false)
    {
        let Ok(entry) = entry else { continue };
        let is_json = entry.path().extension().is_some_and(|e| e == "json");
        if !is_json {
            continue;
        }
        if entry.path_is_symlink() {
            links.push(entry.into_path());
        } else if entry.file_type().is_file() {
            files.push(entry.into_path());
        }
    }
    (files, links)
}

/// Reads one file: `None` (with a note) when it is not a partial result.
fn read_one(file: &Path, report_dir: &Path) -> Result<(Option<Loaded>, Vec<String>), MergeError> {
    let mut notes = Vec::new();
    let bytes = read_bounded(file)?;
    let mut result = match serde_json::from_slice::<PartialResult>(&bytes) {
        // The common case, in one pass: a partial result of the version this build writes.
        Ok(result) if READ_VERSIONS.contains(&result.format_version) => result,
        // Anything else is probed first, for the right note or error.
        _ => match probe_partial(file, &bytes)? {
            Some(result) => result,
            None => {
                notes.push(format!(
                    "skipped `{}`: not a cargo-verify-matrix partial result",
                    file.display()
                ));
                return Ok((None, notes));
            }
        },
    };
    drop(bytes);
    let replayed = journal::replay(file, &mut result)?;
    if replayed > 0 {
        notes.push(format!(
            "`{}` is from a run that did not finish: {replayed} finished check{} read from its journal",
            file.display(),
            if replayed == 1 { "" } else { "s" }
        ));
    }
    confine_logs(file, &mut result, report_dir, &mut notes);
    forget_merged_shards(&mut result);
    let loaded = Loaded {
        path: file.to_path_buf(),
        result,
    };
    Ok((Some(loaded), notes))
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
fn in_parallel<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
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
    notes: &mut Vec<String>,
) {
    let dir = file.parent().unwrap_or(Path::new("."));
    let confined = Confined::new(dir);
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
                Some(prefix) => Some(format!("{prefix}{log}").into()),
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
