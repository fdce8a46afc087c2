//! Mocha's `--reporter json`: `stats` (`tests`, `passes`, `pending`, `failures`) and the
//! tests in `passes`, `failures` and `pending` (each `title`, `fullTitle`, `file`,
//! `duration`, `currentRetry`, `err` with `message` and `stack`). A failed hook
//! (`"before all" hook for …`) is in `failures` though it is no test: a failure all the
//! same. A test is its file and its full title; one that passed on a retry
//! (`currentRetry` above 0) is flaky.

use serde::Deserialize;

use super::json::{Listed, millis};
use super::{Collector, Found, ReadError};
use crate::results::TestOutcome;

#[derive(Deserialize)]
pub(in crate::run::reports) struct Stats {
    #[serde(default)]
    tests: Option<u64>,
    #[serde(default)]
    failures: Option<u64>,
}

#[derive(Deserialize)]
pub(in crate::run::reports) struct Test {
    #[serde(default)]
    title: String,
    #[serde(default, rename = "fullTitle")]
    full_title: Option<String>,
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default, rename = "currentRetry")]
    current_retry: Option<u64>,
    #[serde(default)]
    err: Option<Error>,
}

#[derive(Deserialize)]
struct Error {
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    stack: Option<String>,
}

impl Test {
    /// It carries an error (Mocha writes `"err": {}` for a test without one).
    pub(super) fn has_error(&self) -> bool {
        self.err
            .as_ref()
            .is_some_and(|e| e.message.is_some() || e.stack.is_some())
    }
}

/// Reads one test of Mocha's `passes` (`Passed`), `failures` (`Failed`) or `pending`
/// (`Skipped`) list into `sink`.
pub(super) fn add(
    test: &Test,
    listed_as: TestOutcome,
    sink: &mut Collector<'_>,
    listed: &mut Listed,
) {
    listed.tests += 1;
    listed.failed += u64::from(listed_as == TestOutcome::Failed);
    let outcome = match listed_as {
        TestOutcome::Passed if test.current_retry.is_some_and(|n| n > 0) => TestOutcome::Flaky,
        other => other,
    };
    let err = test.err.as_ref();
    sink.add(Found {
        suite: test.file.as_deref().unwrap_or_default(),
        name: test.full_title.as_deref().unwrap_or(&test.title),
        outcome: Some(outcome),
        duration_ms: millis(test.duration, 1.0),
        message: err.and_then(|e| e.message.as_deref()).unwrap_or_default(),
        output: err.and_then(|e| e.stack.as_deref()).unwrap_or_default(),
        file: test.file.as_deref(),
        ..Found::default()
    });
}

/// The end of Mocha's JSON: its three lists were all there, and its `stats` hold.
pub(super) fn finish(
    stats: &Stats,
    lists: usize,
    errors: u64,
    listed: &Listed,
    sink: &mut Collector<'_>,
) -> Result<(), ReadError> {
    if lists < 3 {
        return Err(ReadError::new(
            "a Mocha JSON report without its `passes`, `failures` and `pending` lists",
        ));
    }
    sink.hold_totals(&[
        (stats.failures, listed.failed, "failures"),
        (stats.tests, listed.tests, "tests"),
        (Some(errors), listed.failed, "tests with an error"),
    ]);
    Ok(())
}
