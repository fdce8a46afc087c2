//! The journal of a run in progress: one JSON line per finished check, appended to
//! `verify-matrix-<env>.journal.jsonl` beside the result file. Recording a check costs
//! the same whatever the number of checks before it (the result file is written twice:
//! at the start, every check not run, and complete at the end, after which the journal
//! is removed).
//!
//! If the tool is killed before the end (`kill -9`, a lost runner), the result file
//! still says the run did not finish, and the journal holds every check that did: the
//! reader of the result file ([`replay`], used by `merge` and `render`) lays the
//! journal's results over the file's placeholders, and the checks it lacks stay not
//! run. The journal comes from pull-request code like the result file: it is
//! size-bounded, each line must be a check result of that environment for a check the
//! file lists, and only a last line cut short by the kill is passed over.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::io::{ResultFileError, read_bounded};
use super::schema::{CheckResult, PartialResult, Status};

/// The journal beside the result file `result_path` (`verify-matrix-<env>.json` gives
/// `verify-matrix-<env>.journal.jsonl`).
pub fn journal_path(result_path: &Path) -> PathBuf {
    let name = result_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    result_path.with_file_name(format!("{stem}.journal.jsonl"))
}

/// An open journal, appended to as checks finish.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
}

impl Journal {
    /// Starts the journal of the result file `result_path`, empty (a journal left by an
    /// earlier run of the environment is replaced).
    pub fn create(result_path: &Path) -> Result<Journal, ResultFileError> {
        let path = journal_path(result_path);
        let file = File::create(&path).map_err(|source| ResultFileError::Write {
            path: path.clone(),
            source,
        })?;
        Ok(Journal { path, file })
    }

    /// Appends `result` as one line, in one write: a killed process leaves whole lines
    /// and at most one cut short at the end.
    pub fn append(&mut self, result: &CheckResult) -> Result<(), ResultFileError> {
        let mut line =
            serde_json::to_vec(result).map_err(|e| self.write_error(std::io::Error::other(e)))?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .map_err(|source| self.write_error(source))
    }

    /// Removes the journal once the complete result file is written.
    pub fn remove(self) {
        drop(self.file);
        let _ = std::fs::remove_file(&self.path);
    }

    fn write_error(&self, source: std::io::Error) -> ResultFileError {
        ResultFileError::Write {
            path: self.path.clone(),
            source,
        }
    }
}

/// Lays the journal beside `result_path` over `partial`, a result file whose run did
/// not finish (no `finished_at`): each journal line replaces the placeholder of its
/// check. Returns how many checks the journal gave. A finished run's file is complete
/// and its journal (if one was left) is not read.
pub fn replay(result_path: &Path, partial: &mut PartialResult) -> Result<usize, ResultFileError> {
    if !partial.unfinished() {
        return Ok(0);
    }
    let path = journal_path(result_path);
    if !path.is_file() {
        return Ok(0);
    }
    let bytes = read_bounded(&path)?;
    let invalid = |line: usize, message: String| ResultFileError::Invalid {
        path: path.clone(),
        message: format!("line {line}: {message}"),
    };
    let mut replayed = 0;
    let mut lines = bytes.split(|b| *b == b'\n').enumerate().peekable();
    while let Some((index, line)) = lines.next() {
        // The last piece is empty after a final newline, or a line the kill cut short.
        if lines.peek().is_none() {
            break;
        }
        let result: CheckResult =
            super::objects::from_slice(line).map_err(|e| invalid(index + 1, e.to_string()))?;
        if result.environment != partial.environment {
            return Err(invalid(
                index + 1,
                format!(
                    "a result of environment `{}` in the journal of `{}`",
                    result.environment.escape_debug(),
                    partial.environment
                ),
            ));
        }
        let slot = partial
            .checks
            .iter_mut()
            .find(|c| c.command_id == result.command_id && c.status == Status::NotRun)
            .ok_or_else(|| {
                invalid(
                    index + 1,
                    format!(
                        "check `{}` is not one the result file waits for",
                        result.command_id.escape_debug()
                    ),
                )
            })?;
        **slot = result;
        replayed += 1;
    }
    Ok(replayed)
}
