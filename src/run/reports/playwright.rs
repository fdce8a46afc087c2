//! Playwright's JSON reporter (`--reporter=json`): `suites` (a file's suite, its
//! `describe()` suites inside, each with `specs`; each spec's `tests`, one per project,
//! each with its `status` — `expected`, `unexpected`, `flaky` or `skipped` — and the
//! `results` of every run, retries included), `errors` (what failed outside any test: a
//! file that failed to load) and `stats` (`expected`, `unexpected`, `flaky`, `skipped`).
//!
//! A test is its project, file and `describe()` path, and its title. Its outcome is the
//! runner's own verdict over its runs: `flaky` (failed, then passed on a retry) is
//! flaky, `unexpected` failed; Playwright's JUnit reporter keeps only the last run, so
//! its flaky tests read as passed there: this is the report that says so.

use serde::Deserialize;

use super::json::{Listed, millis};
use super::{Collector, Found, ReadError};
use crate::results::TestOutcome;

/// The deepest `describe()` nesting read (serde's own limit is about as deep).
const MAX_DEPTH: usize = 64;

#[derive(Deserialize)]
pub(in crate::run::reports) struct Suite {
    #[serde(default)]
    title: String,
    #[serde(default)]
    specs: Vec<Spec>,
    #[serde(default)]
    suites: Vec<Suite>,
}

#[derive(Deserialize)]
struct Spec {
    #[serde(default)]
    title: String,
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    line: Option<u32>,
    #[serde(default)]
    tests: Vec<Test>,
}

#[derive(Deserialize)]
struct Test {
    #[serde(default, rename = "projectName")]
    project_name: Option<String>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    results: Vec<Run>,
}

/// One run of a test (the first, then each retry).
#[derive(Deserialize)]
struct Run {
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    error: Option<Error>,
}

#[derive(Deserialize)]
pub(in crate::run::reports) struct Error {
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    stack: Option<String>,
    #[serde(default)]
    location: Option<Location>,
}

#[derive(Deserialize)]
struct Location {
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    line: Option<u32>,
}

#[derive(Deserialize, Default)]
pub(in crate::run::reports) struct Stats {
    #[serde(default)]
    expected: Option<u64>,
    #[serde(default)]
    unexpected: Option<u64>,
    #[serde(default)]
    flaky: Option<u64>,
    #[serde(default)]
    skipped: Option<u64>,
}

impl Stats {
    /// Whether these are Playwright's (Mocha's `stats` have none of its keys).
    pub(super) fn is_playwrights(&self) -> bool {
        self.expected.is_some() || self.unexpected.is_some()
    }
}

/// Reads one file's suite of Playwright's `suites` into `sink`.
pub(super) fn add_suite(
    suite: &Suite,
    sink: &mut Collector<'_>,
    listed: &mut Listed,
) -> Result<(), String> {
    let mut path = Vec::new();
    walk(suite, &mut path, sink, listed)
}

fn walk<'s>(
    suite: &'s Suite,
    path: &mut Vec<&'s str>,
    sink: &mut Collector<'_>,
    listed: &mut Listed,
) -> Result<(), String> {
    if path.len() >= MAX_DEPTH {
        return Err(format!("suites nested deeper than {MAX_DEPTH}"));
    }
    path.push(&suite.title);
    for spec in &suite.specs {
        for test in &spec.tests {
            add_test(spec, test, path, sink, listed);
        }
    }
    for inner in &suite.suites {
        walk(inner, path, sink, listed)?;
    }
    path.pop();
    Ok(())
}

fn add_test(
    spec: &Spec,
    test: &Test,
    path: &[&str],
    sink: &mut Collector<'_>,
    listed: &mut Listed,
) {
    listed.tests += 1;
    let last = test.results.last();
    let outcome = match test.status.as_deref() {
        Some("expected") if last.and_then(|r| r.status.as_deref()) == Some("skipped") => {
            TestOutcome::Skipped
        }
        Some("expected") => TestOutcome::Passed,
        Some("flaky") => TestOutcome::Flaky,
        Some("skipped") => TestOutcome::Skipped,
        // `unexpected`, and anything else: it did not pass.
        _ => TestOutcome::Failed,
    };
    listed.failed += u64::from(outcome == TestOutcome::Failed);
    // The run that says why: the last for a failure, the first failed one for a flaky
    // test.
    let telling = match outcome {
        TestOutcome::Flaky => test.results.iter().find(|r| r.error.is_some()),
        _ => last,
    };
    let error = telling.and_then(|r| r.error.as_ref());
    let unknown = match test.status.as_deref() {
        Some("expected" | "unexpected" | "flaky" | "skipped") => None,
        Some(other) => Some(format!("Playwright's status `{other}` is not a pass")),
        None => Some("Playwright gives it no status".to_owned()),
    };
    let mut suite: Vec<&str> = Vec::with_capacity(path.len() + 1);
    if let Some(project) = test.project_name.as_deref().filter(|p| !p.is_empty()) {
        suite.push(project);
    }
    suite.extend(path.iter().copied().filter(|t| !t.is_empty()));
    let suite = suite.join(" › ");
    let place = error.and_then(|e| e.location.as_ref());
    sink.add(Found {
        suite: &suite,
        name: &spec.title,
        outcome: Some(outcome),
        duration_ms: millis(
            Some(test.results.iter().filter_map(|r| r.duration).sum()),
            1.0,
        ),
        message: unknown
            .as_deref()
            .or(error.and_then(|e| e.message.as_deref()))
            .unwrap_or_default(),
        output: error.and_then(|e| e.stack.as_deref()).unwrap_or_default(),
        file: place
            .and_then(|l| l.file.as_deref())
            .or(spec.file.as_deref()),
        line: place.and_then(|l| l.line).or(spec.line),
        ..Found::default()
    });
}

/// The end of Playwright's JSON: each error outside the tests a failure, and its
/// `stats` held against the tests listed.
pub(super) fn finish(
    stats: Option<&Stats>,
    errors: &[Error],
    listed: &Listed,
    sink: &mut Collector<'_>,
) -> Result<(), ReadError> {
    for error in errors {
        let message = error
            .message
            .as_deref()
            .unwrap_or("an error outside any test");
        sink.add(Found {
            name: "(the run's errors)",
            outcome: Some(TestOutcome::Error),
            message,
            output: error.stack.as_deref().unwrap_or_default(),
            file: error.location.as_ref().and_then(|l| l.file.as_deref()),
            line: error.location.as_ref().and_then(|l| l.line),
            outside: true,
            ..Found::default()
        });
    }
    let Some(stats) = stats else {
        return Err(ReadError::new(
            "a Playwright JSON report without its `stats`: its totals cannot be held to its tests",
        ));
    };
    let total = [stats.expected, stats.unexpected, stats.flaky, stats.skipped]
        .into_iter()
        .try_fold(0u64, |sum, n| n.map(|n| sum.saturating_add(n)));
    sink.hold_totals(&[
        (stats.unexpected, listed.failed, "unexpected tests"),
        (total, listed.tests, "tests"),
    ]);
    Ok(())
}
