//! `history tests`: each test's health over the last runs — how often it ran, failed,
//! and was flaky (failed, then passed on a retry, within one run) — overall and on the
//! base branch, the commit of its first failure in the window, and its last green.
//!
//! A test is the identity baselines compare: its check, and the runner's id where the
//! report gave one, else its suite and name. Each environment a run ran it in is one
//! run of the test.

use std::collections::HashMap;

use rusqlite::params;
use serde::Serialize;

use super::{History, HistoryError, last_runs, sqlite};

/// Which runs and tests to look at.
#[derive(Debug, Clone, Default)]
pub struct HealthQuery {
    pub check: Option<String>,
    pub environment: Option<String>,
    /// The base branch: its own counts are given beside the overall ones.
    pub base: String,
    /// The most recent runs looked at (overall, and on the base branch).
    pub last: u32,
    /// Pull requests' runs counted too.
    pub pull_requests: bool,
    /// Tests that never failed nor were flaky in the window listed too.
    pub all: bool,
}

/// One test over the runs looked at.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestHealth {
    pub check: String,
    pub suite: String,
    pub name: String,
    /// The runner's own id, where the report gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Runs of it (each environment of each run), and those that failed or were flaky.
    pub runs: u32,
    pub failed: u32,
    pub flaky: u32,
    pub failure_rate: f64,
    pub flaky_rate: f64,
    /// The same on the base branch alone.
    pub base_runs: u32,
    pub base_failed: u32,
    pub base_flaky: u32,
    /// The first run in the window in which it failed.
    pub first_failure: Option<Seen>,
    /// The most recent run in which it passed (a flaky pass counts).
    pub last_green: Option<Seen>,
    /// It failed in the most recent run that ran it.
    pub failing_now: bool,
    /// The most recent runs of it that passed, in a row (a flaky pass or a failure
    /// ends the streak; a skip neither adds nor ends).
    pub passed_in_a_row: u32,
}

/// A run in which a test was seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Seen {
    pub commit: Option<String>,
    pub recorded_at: String,
    pub branch: Option<String>,
}

/// What a sort puts first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HealthSort {
    /// The highest flaky rate, then failure rate.
    #[default]
    Flaky,
    /// The highest failure rate, then flaky rate.
    Failures,
}

type Key = (String, String, String, Option<String>);

/// The tests of the last `query.last` runs, each with its health, sorted by `sort`.
pub fn tests(
    history: &History,
    query: &HealthQuery,
    sort: HealthSort,
) -> Result<Vec<TestHealth>, HistoryError> {
    let mut found: HashMap<Key, TestHealth> = HashMap::new();
    // Overall first (every branch), then the base branch's own counts.
    for base in [false, true] {
        let path = history.path();
        let runs = last_runs(query.pull_requests);
        let mut statement = history
            .connection()
            .prepare(&format!(
                "SELECT t.check_id, t.suite, t.name, t.test_id, t.outcome,
                        r.commit_sha, r.recorded_at, r.branch
                 FROM tests t JOIN runs r ON r.id = t.run
                 WHERE t.run IN ({runs})
                   AND (?3 IS NULL OR t.check_id = ?3)
                   AND (?4 IS NULL OR t.environment = ?4)
                 ORDER BY r.recorded_at, r.id"
            ))
            .map_err(|e| sqlite(path, e))?;
        let branch = base.then_some(query.base.as_str());
        let mut rows = statement
            .query(params![branch, query.last, query.check, query.environment])
            .map_err(|e| sqlite(path, e))?;
        while let Some(row) = rows.next().map_err(|e| sqlite(path, e))? {
            let read = || -> rusqlite::Result<(Key, String, Seen)> {
                let seen = Seen {
                    commit: row.get(5)?,
                    recorded_at: row.get(6)?,
                    branch: row.get(7)?,
                };
                Ok((
                    (row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?),
                    row.get(4)?,
                    seen,
                ))
            };
            let ((check, suite, name, id), outcome, seen) = read().map_err(|e| sqlite(path, e))?;
            // The id stands for the test where there is one: its display names may
            // change from run to run.
            let key = match &id {
                Some(_) => (check.clone(), String::new(), String::new(), id.clone()),
                None => (check.clone(), suite.clone(), name.clone(), None),
            };
            let test = found.entry(key).or_insert_with(|| TestHealth {
                check,
                suite,
                name,
                id,
                runs: 0,
                failed: 0,
                flaky: 0,
                failure_rate: 0.0,
                flaky_rate: 0.0,
                base_runs: 0,
                base_failed: 0,
                base_flaky: 0,
                first_failure: None,
                last_green: None,
                failing_now: false,
                passed_in_a_row: 0,
            });
            let failed = matches!(outcome.as_str(), "failed" | "error");
            let flaky = outcome == "flaky";
            if base {
                test.base_runs += 1;
                test.base_failed += u32::from(failed);
                test.base_flaky += u32::from(flaky);
                continue;
            }
            test.runs += 1;
            test.failed += u32::from(failed);
            test.flaky += u32::from(flaky);
            // Rows come oldest first: the last one seen is the most recent run.
            test.failing_now = failed;
            match outcome.as_str() {
                "passed" => test.passed_in_a_row += 1,
                "skipped" => {}
                _ => test.passed_in_a_row = 0,
            }
            if failed && test.first_failure.is_none() {
                test.first_failure = Some(seen);
            } else if matches!(outcome.as_str(), "passed" | "flaky") {
                test.last_green = Some(seen);
            }
        }
    }
    let mut tests: Vec<TestHealth> = found
        .into_values()
        .filter(|t| t.runs > 0 && (query.all || t.failed > 0 || t.flaky > 0))
        .map(|mut t| {
            t.failure_rate = f64::from(t.failed) / f64::from(t.runs);
            t.flaky_rate = f64::from(t.flaky) / f64::from(t.runs);
            t
        })
        .collect();
    let rank = |t: &TestHealth| match sort {
        HealthSort::Flaky => (t.flaky_rate, t.failure_rate),
        HealthSort::Failures => (t.failure_rate, t.flaky_rate),
    };
    tests.sort_by(|a, b| {
        rank(b)
            .partial_cmp(&rank(a))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| (&a.check, &a.suite, &a.name).cmp(&(&b.check, &b.suite, &b.name)))
    });
    Ok(tests)
}

/// The most failing tests of one report given their history (each is one query).
pub const MAX_NOTED: usize = 500;

/// The base branch's runs a failing test's history is read over.
pub const NOTE_WINDOW: u32 = 20;

/// Gives each failing test of `report` what the history says of it on `branch` over
/// its last [`NOTE_WINDOW`] runs (pull requests' runs left out): `also failing on main
/// since abc1234` when it failed in the branch's latest run of it, `known flaky: failed
/// 4 of last 20 on main` when it failed (or passed only on a retry) in some of them,
/// else `new: never failed before` (`new: not run on main before` for a test the branch
/// never ran). Returns how many were noted (at most [`MAX_NOTED`]).
pub fn note_failures(
    history: &History,
    branch: &str,
    report: &mut crate::results::Report,
) -> Result<usize, HistoryError> {
    let path = history.path();
    let runs = last_runs(false);
    let mut statement = history
        .connection()
        .prepare(&format!(
            "SELECT t.run, t.outcome, r.commit_sha
             FROM tests t JOIN runs r ON r.id = t.run
             WHERE t.run IN ({runs})
               AND t.check_id = ?3 AND t.test_id IS ?4
               AND (?4 IS NOT NULL OR (t.suite = ?5 AND t.name = ?6))
             ORDER BY r.recorded_at DESC, r.id DESC"
        ))
        .map_err(|e| sqlite(path, e))?;
    let mut noted = 0;
    for row in &mut report.rows {
        let check = row.check.clone();
        let Some(tests) = row.detail.tests.as_deref_mut() else {
            continue;
        };
        for case in tests.cases.iter_mut().filter(|c| c.outcome.is_failure()) {
            if noted == MAX_NOTED {
                return Ok(noted);
            }
            let mut rows = statement
                .query(params![
                    branch,
                    NOTE_WINDOW,
                    check.as_str(),
                    case.id.as_deref(),
                    case.suite.as_str(),
                    case.name.as_str()
                ])
                .map_err(|e| sqlite(path, e))?;
            // Per run, newest first: whether it failed, was flaky, and its commit.
            let mut by_run: Vec<(i64, bool, bool, Option<String>)> = Vec::new();
            while let Some(r) = rows.next().map_err(|e| sqlite(path, e))? {
                let read = || -> rusqlite::Result<(i64, String, Option<String>)> {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                };
                let (run, outcome, commit) = read().map_err(|e| sqlite(path, e))?;
                let failed = matches!(outcome.as_str(), "failed" | "error");
                let flaky = outcome == "flaky";
                match by_run.last_mut() {
                    Some(last) if last.0 == run => {
                        last.1 |= failed;
                        last.2 |= flaky;
                    }
                    _ => by_run.push((run, failed, flaky, commit)),
                }
            }
            case.history = Some(note(&by_run, branch).into());
            noted += 1;
        }
    }
    Ok(noted)
}

/// The note for a test whose runs on `branch`, newest first, are `by_run`.
fn note(by_run: &[(i64, bool, bool, Option<String>)], branch: &str) -> String {
    let failed = by_run.iter().filter(|r| r.1).count();
    let flaky = by_run.iter().filter(|r| r.2 && !r.1).count();
    let streak = by_run.iter().take_while(|r| r.1).count();
    if streak > 0 {
        let since = by_run[streak - 1]
            .3
            .as_deref()
            .map_or("?", crate::render::text::short_commit);
        return format!("also failing on {branch} since {since}");
    }
    match (failed, flaky, by_run.len()) {
        (_, _, 0) => format!("new: not run on {branch} before"),
        (0, 0, _) => "new: never failed before".to_owned(),
        (0, flaky, runs) => {
            format!("known flaky: passed only on a retry in {flaky} of last {runs} on {branch}")
        }
        (failed, _, runs) => format!("known flaky: failed {failed} of last {runs} on {branch}"),
    }
}
