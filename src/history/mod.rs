//! The verification history: every report kept in one SQLite file (the book's "History"),
//! queryable with `sqlite3`. Writes are transactions in WAL mode with a busy timeout, so
//! a crash or a concurrent writer never corrupts or loses what was recorded; a file that
//! is not a database, or another program's, is refused and never overwritten.

mod base;
mod health;
mod html;
mod prune;
mod schema;
mod show;
pub mod timing;
pub mod unzip;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior, params};

use crate::results::{Report, RowResult};

pub use base::BaseQuery;
pub use health::{
    HealthQuery, HealthSort, MAX_NOTED, NOTE_WINDOW, Seen, TestHealth, note_failures, tests,
};
pub use html::{PageQuery, page};
pub use prune::{DEFAULT_KEEP_DAYS, DEFAULT_KEEP_RUNS, Pruned, Retention};
pub use schema::{APPLICATION_ID, SCHEMA_VERSION};
pub use show::{Stats, StatsQuery, stats};

/// The ids of the last `?2` runs, on branch `?1` when it is not null, and without the
/// runs of pull requests unless `pull_requests`: the runs `show` and `html` look at (a
/// query's `WHERE … IN (…)`). A pull request's run is one that records its pull request
/// or was started by a pull-request event.
fn last_runs(pull_requests: bool) -> String {
    let prs = if pull_requests {
        ""
    } else {
        " AND pr IS NULL AND COALESCE(event, '') NOT IN ('pull_request', 'pull_request_target')"
    };
    format!(
        "SELECT id FROM runs WHERE (?1 IS NULL OR branch = ?1){prs}
    ORDER BY recorded_at DESC, id DESC LIMIT ?2"
    )
}

/// The database file used when none is named.
pub const DEFAULT_PATH: &str = ".verify-matrix/history.sqlite";

/// How long a writer waits for another to finish.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The most tests recorded per pair (a report lists at most 100,000 per check).
const MAX_TESTS_PER_PAIR: usize = 100_000;

/// What went wrong with the history database.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The file exists but is not this tool's history (not SQLite, another program's,
    /// or a newer schema): refused, left as it is.
    #[error("history database `{path}`: {reason}; it was left as it is")]
    Refused { path: PathBuf, reason: String },
    #[error("history database `{path}`: {source}")]
    Sqlite {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("history database `{path}`: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// An open history database.
pub struct History {
    connection: Connection,
    path: PathBuf,
}

/// Where a report came from beyond what it records itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    /// The branch the run is recorded on (`history add`: `GITHUB_REF_NAME`; `history
    /// sync`: the run's head branch).
    pub branch: Option<String>,
    /// When the run happened (RFC 3339); when unknown, when the report's legs finished,
    /// else the time of the import.
    pub recorded_at: Option<String>,
}

/// What adding a report did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    /// A new run, with this many pairs.
    New { pairs: usize, tests: usize },
    /// The same run attempt was recorded before: nothing was written.
    AlreadyRecorded,
}

impl History {
    /// Opens (creating it and its folder when missing) the database at `path`, migrated
    /// to the current schema.
    pub fn open(path: &Path) -> Result<History, HistoryError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| HistoryError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        }
        let existed = path.metadata().is_ok_and(|m| m.len() > 0);
        let connection = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|source| sqlite(path, source))?;
        // Before anything takes a lock: two first writers may create and migrate the
        // file at the same moment.
        connection
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|source| sqlite(path, source))?;
        let mut history = History {
            connection,
            path: path.to_path_buf(),
        };
        // Setting the journal mode and migrating take locks SQLite does not wait for
        // when another connection is doing the same (two first writers): tried again
        // until the busy timeout.
        let started = std::time::Instant::now();
        loop {
            match schema::prepare(&mut history.connection, existed) {
                Ok(()) => return Ok(history),
                Err(schema::PrepareError::Sqlite(source))
                    if is_busy(&source) && started.elapsed() < BUSY_TIMEOUT =>
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(schema::PrepareError::Refused(reason)) => {
                    return Err(HistoryError::Refused {
                        path: path.to_path_buf(),
                        reason,
                    });
                }
                Err(schema::PrepareError::Sqlite(source)) => return Err(sqlite(path, source)),
            }
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records `report` as one run, in one transaction: a run attempt already recorded
    /// (same repository, workflow run, attempt and manifest; or, without a workflow run,
    /// the same report) is left as it is.
    pub fn add(&mut self, report: &Report, origin: &Origin) -> Result<Added, HistoryError> {
        let path = self.path.clone();
        let key = run_key(report);
        let tx = self
            .connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sqlite(&path, e))?;
        let known: bool = tx
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM runs WHERE key = ?1)",
                [&key],
                |r| r.get(0),
            )
            .map_err(|e| sqlite(&path, e))?;
        if known {
            return Ok(Added::AlreadyRecorded);
        }
        let source = &report.source;
        // When the run happened: as its origin says, else as its results say, else now.
        let recorded_at = origin
            .recorded_at
            .clone()
            .or_else(|| report.finished_at.clone())
            .unwrap_or_else(crate::results::source::now_rfc3339);
        tx.execute(
            "INSERT INTO runs (key, repository, branch, commit_sha, pr, run_id, run_attempt,
                recorded_at, manifest_path, manifest_digest, verdict, reasons, event)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            params![
                key,
                source.repository,
                origin.branch,
                source.commit,
                source.pr.map(int),
                source.run_id,
                source.run_attempt,
                recorded_at,
                report.manifest.path,
                report.manifest.digest,
                report.verdict.as_str(),
                // The reasons a run is shown with, not the run's record: a report (an
                // artifact) with millions of them would make the file grow without end.
                serde_json::to_string(&report.reasons[..report.reasons.len().min(MAX_REASONS)])
                    .unwrap_or_else(|_| "[]".to_owned()),
                source.event,
            ],
        )
        .map_err(|e| sqlite(&path, e))?;
        let run = tx.last_insert_rowid();
        let mut pairs: i64 = 0;
        let mut tests: i64 = 0;
        {
            let mut pair = tx
                .prepare(
                    "INSERT OR IGNORE INTO pairs (run, check_id, environment, position, result,
                        status, exit_code, duration_ms, tests_passed, tests_failed,
                        tests_skipped, tests_flaky, retried_flaky, summary, tests_executed)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                )
                .map_err(|e| sqlite(&path, e))?;
            let mut shard = tx
                .prepare(
                    "INSERT OR IGNORE INTO shards (run, check_id, environment, shard, shards,
                        status, duration_ms, tests_executed)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(|e| sqlite(&path, e))?;
            let mut test = tx
                .prepare(
                    "INSERT INTO tests (run, check_id, environment, suite, name, outcome,
                        duration_ms, test_id)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(|e| sqlite(&path, e))?;
            for row in &report.rows {
                let d = &row.detail;
                let counts = d.test_counts.as_ref();
                pair.execute(params![
                    run,
                    row.check.as_str(),
                    row.environment.as_str(),
                    pairs,
                    match row.result {
                        RowResult::Pass => "PASS",
                        RowResult::Fail => "FAIL",
                    },
                    d.status.as_str(),
                    row.exit_code,
                    int(d.duration_ms),
                    counts.map(|c| int(c.passed)),
                    counts.map(|c| int(c.failed)),
                    counts.map(|c| int(c.skipped)),
                    counts.map(|c| int(c.flaky)),
                    d.flaky,
                    d.summary.as_str(),
                    d.tests_executed.map(int),
                ])
                .map_err(|e| sqlite(&path, e))?;
                pairs += 1;
                for part in d.sharded.iter().flat_map(|s| s.parts.iter()) {
                    shard
                        .execute(params![
                            run,
                            row.check.as_str(),
                            row.environment.as_str(),
                            part.shard.index,
                            part.shard.count,
                            part.status.as_str(),
                            int(part.duration_ms),
                            part.tests_executed.map(int),
                        ])
                        .map_err(|e| sqlite(&path, e))?;
                }
                for case in d
                    .tests
                    .iter()
                    .flat_map(|t| t.cases.iter())
                    .take(MAX_TESTS_PER_PAIR)
                {
                    test.execute(params![
                        run,
                        row.check.as_str(),
                        row.environment.as_str(),
                        case.suite.as_str(),
                        case.name.as_str(),
                        case.outcome.as_str(),
                        case.duration_ms.map(int),
                        case.id.as_deref(),
                    ])
                    .map_err(|e| sqlite(&path, e))?;
                    tests += 1;
                }
            }
            for missing in &report.missing {
                pair.execute(params![
                    run,
                    missing.check.as_str(),
                    missing.environment.as_str(),
                    pairs,
                    "MISSING",
                    Option::<&str>::None,
                    Option::<i32>::None,
                    Option::<i64>::None,
                    Option::<i64>::None,
                    Option::<i64>::None,
                    Option::<i64>::None,
                    Option::<i64>::None,
                    false,
                    missing.reason.as_str(),
                    Option::<i64>::None,
                ])
                .map_err(|e| sqlite(&path, e))?;
                pairs += 1;
            }
        }
        tx.commit().map_err(|e| sqlite(&path, e))?;
        Ok(Added::New {
            pairs: usize::try_from(pairs).unwrap_or(0),
            tests: usize::try_from(tests).unwrap_or(0),
        })
    }

    /// Whether an attempt of a workflow run is recorded (for any manifest); a run that
    /// records no attempt (a GitLab pipeline) is attempt 1.
    pub fn has_run(
        &self,
        repository: &str,
        run_id: &str,
        attempt: u32,
    ) -> Result<bool, HistoryError> {
        self.connection
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM runs
                 WHERE repository = ?1 AND run_id = ?2 AND coalesce(run_attempt, 1) = ?3)",
                params![repository, run_id, attempt],
                |r| r.get(0),
            )
            .map_err(|e| sqlite(&self.path, e))
    }

    /// The runs recorded.
    pub fn run_count(&self) -> Result<u64, HistoryError> {
        self.connection
            .query_row("SELECT count(*) FROM runs", [], |r| r.get::<_, i64>(0))
            .map(|n| u64::try_from(n).unwrap_or(0))
            .map_err(|e| sqlite(&self.path, e))
    }

    pub(crate) fn connection(&self) -> &Connection {
        &self.connection
    }
}

/// The most of a run's reasons the history keeps.
const MAX_REASONS: usize = 1000;

/// What makes a run the same run: its repository, workflow run, attempt and manifest;
/// without a workflow run, the report's whole content (two local runs of one commit can
/// agree on every pair's exit code and duration, and are still two runs).
pub(crate) fn run_key(report: &Report) -> String {
    let s = &report.source;
    match &s.run_id {
        Some(run_id) => format!(
            "run:{}:{run_id}:{}:{}",
            s.repository.as_deref().unwrap_or(""),
            s.run_attempt.unwrap_or(1),
            report.manifest.path
        ),
        None => {
            use sha2::{Digest, Sha256};
            // Hashed as it is serialized: a large report is never held twice.
            let mut hash = Sha256::new();
            let _ = serde_json::to_writer(&mut hash, report);
            let digest = hash.finalize();
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            format!("report:{hex}")
        }
    }
}

/// Another connection holds the lock.
fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// A count or duration as SQLite stores integers.
fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn sqlite(path: &Path, source: rusqlite::Error) -> HistoryError {
    HistoryError::Sqlite {
        path: path.to_path_buf(),
        source,
    }
}
