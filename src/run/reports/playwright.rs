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
    /// Playwright's word on the spec: every test of it passed (or was flaky).
    #[serde(default)]
    ok: Option<bool>,
    #[serde(default)]
    tests: Vec<Test>,
}

#[derive(Deserialize)]
struct Test {
    #[serde(default, rename = "projectName")]
    project_name: Option<String>,
    #[serde(default)]
    status: Option<String>,
    /// What a run must end as to be a pass: `passed`, or `failed` for a `test.fail()`,
    /// `skipped` for a `test.skip()`.
    #[serde(default, rename = "expectedStatus")]
    expected_status: Option<String>,
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
    #[serde(default)]
    errors: Vec<Error>,
}

impl Run {
    /// Whether it ended as `expected` says a run of its test must: a `passed` run that
    /// carries an error is no pass.
    fn as_expected(&self, expected: &str) -> bool {
        self.status.as_deref() == Some(expected)
            && (expected != "passed" || (self.error.is_none() && self.errors.is_empty()))
    }
}

/// The statuses a run of a test ends with.
const RUN_STATUSES: [&str; 5] = ["passed", "failed", "timedOut", "skipped", "interrupted"];

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
        let mut failed = false;
        for test in &spec.tests {
            failed |= add_test(spec, test, path, sink, listed) == TestOutcome::Failed;
        }
        if spec.ok == Some(false) && !failed {
            // Playwright says the spec failed, and no test of it shows how.
            sink.add(Found {
                suite: &path.iter().copied().filter(|t| !t.is_empty()).collect::<Vec<_>>().join(" › "),
                name: &spec.title,
                outcome: Some(TestOutcome::Error),
                message: "Playwright marks the spec failed (`ok: false`), and none of its tests failed",
                file: spec.file.as_deref(),
                line: spec.line,
                outside: true,
                ..Found::default()
            });
        }
    }
    for inner in &suite.suites {
        walk(inner, path, sink, listed)?;
    }
    path.pop();
    Ok(())
}

/// A test's outcome, worked out from its runs and what they were expected to end as
/// (never taken from its `status` alone), and what is wrong when it is no pass: the
/// runs after any first skipped ones (a test skipped because one before it failed in a
/// serial group) all as expected is a pass; the last as expected after one that was
/// not is flaky; the last not as expected is a failure. `status` must say the same.
fn judge(test: &Test) -> (TestOutcome, Option<String>) {
    let expected = test.expected_status.as_deref().unwrap_or("passed");
    if !RUN_STATUSES.contains(&expected) {
        return (
            TestOutcome::Failed,
            Some(format!(
                "Playwright's expected status `{expected}` is not known"
            )),
        );
    }
    if let Some(run) = test.results.iter().find(|r| {
        !r.status
            .as_deref()
            .is_some_and(|s| RUN_STATUSES.contains(&s))
    }) {
        let why = match run.status.as_deref() {
            Some(other) => format!("a run's status `{other}` is not known"),
            None => "a run has no status".to_owned(),
        };
        return (TestOutcome::Failed, Some(why));
    }
    let first_run = test
        .results
        .iter()
        .position(|r| r.status.as_deref() != Some("skipped"))
        .unwrap_or(test.results.len());
    let runs = &test.results[first_run..];
    let (outcome, says) = match runs.last() {
        None if test.results.is_empty() && test.status.as_deref() != Some("skipped") => {
            return (
                TestOutcome::Failed,
                Some("no run of it is recorded".to_owned()),
            );
        }
        None => (TestOutcome::Skipped, "skipped"),
        Some(last) if last.status.as_deref() == Some("interrupted") => {
            return (
                TestOutcome::Failed,
                Some("its run was interrupted".to_owned()),
            );
        }
        Some(last) if !last.as_expected(expected) => (TestOutcome::Failed, "unexpected"),
        Some(_) if runs.iter().any(|r| !r.as_expected(expected)) => (TestOutcome::Flaky, "flaky"),
        Some(_) => (TestOutcome::Passed, "expected"),
    };
    let why = match test.status.as_deref() {
        Some(status) if status == says => None,
        Some(status @ ("expected" | "unexpected" | "flaky" | "skipped")) => Some(format!(
            "Playwright's status `{status}` is not what its runs show (`{says}`)"
        )),
        Some(other) => Some(format!("Playwright's status `{other}` is not a pass")),
        None => Some("Playwright gives it no status".to_owned()),
    };
    match why {
        Some(why) => (TestOutcome::Failed, Some(why)),
        None => (outcome, None),
    }
}

fn add_test(
    spec: &Spec,
    test: &Test,
    path: &[&str],
    sink: &mut Collector<'_>,
    listed: &mut Listed,
) -> TestOutcome {
    listed.tests += 1;
    let (outcome, unknown) = judge(test);
    match outcome {
        TestOutcome::Passed => listed.passed += 1,
        TestOutcome::Flaky => listed.flaky += 1,
        TestOutcome::Skipped => listed.skipped += 1,
        _ => listed.failed += 1,
    }
    let expected = test.expected_status.as_deref().unwrap_or("passed");
    // The run that says why: the last for a failure, the first failed one for a flaky
    // test.
    let last = test.results.last();
    let telling = match outcome {
        TestOutcome::Flaky => test.results.iter().find(|r| !r.as_expected(expected)),
        _ => last,
    };
    let error = telling.and_then(|r| r.error.as_ref().or(r.errors.first()));
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
    outcome
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
        .fold(0u64, |sum, n| sum.saturating_add(n.unwrap_or(0)));
    // The stats are counted from the same tests: any difference is a contradiction.
    sink.hold_exact_totals(&[
        (stats.expected.unwrap_or(0), listed.passed, "expected tests"),
        (
            stats.unexpected.unwrap_or(0),
            listed.failed,
            "unexpected tests",
        ),
        (stats.flaky.unwrap_or(0), listed.flaky, "flaky tests"),
        (stats.skipped.unwrap_or(0), listed.skipped, "skipped tests"),
        (total, listed.tests, "tests"),
    ]);
    Ok(())
}
