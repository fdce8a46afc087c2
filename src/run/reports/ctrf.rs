//! CTRF (Common Test Report Format) JSON: `{"results": {"tool": …, "summary": …,
//! "tests": [{"name", "status", "duration", "message", "trace", "filePath", "line",
//! "suite", "flaky", …}]}}`. Statuses `passed`, `failed`, `skipped`, `pending`, `other`.

use serde::Deserialize;

use super::json::Listed;
use super::{Collector, Found};
use crate::results::TestOutcome;

/// The report's own totals, held against its tests.
#[derive(Deserialize)]
pub(super) struct Summary {
    #[serde(default)]
    tests: Option<u64>,
    #[serde(default)]
    failed: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Test {
    name: String,
    status: String,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    trace: Option<String>,
    #[serde(default)]
    file_path: Option<String>,
    #[serde(default)]
    line: Option<u32>,
    /// A name, or (CTRF 1.x) the path of names from the outermost suite.
    #[serde(default)]
    suite: Option<Suite>,
    #[serde(default)]
    flaky: Option<bool>,
    /// The runner's own word for the status (`todo`, `timedOut`, …).
    #[serde(default)]
    raw_status: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Suite {
    One(String),
    Path(Vec<String>),
}

/// Reads one of a CTRF report's `results.tests` into `sink`; what is wrong with it.
pub(super) fn add(
    test: &Test,
    sink: &mut Collector<'_>,
    listed: &mut Listed,
) -> Result<(), String> {
    let index = listed.tests;
    listed.tests += 1;
    listed.failed += u64::from(test.status == "failed");
    {
        let outcome = match test.status.as_str() {
            "passed" if test.flaky == Some(true) => TestOutcome::Flaky,
            "passed" => TestOutcome::Passed,
            "failed" => TestOutcome::Failed,
            // Not run, one way or another: never a pass.
            "skipped" | "pending" => TestOutcome::Skipped,
            // `other` is what the runner's own word (`rawStatus`) says: not run (jest's
            // `todo`, a disabled test) is skipped; anything else (a timeout, an
            // interruption, a word not known here) did not pass.
            "other"
                if test.raw_status.as_deref().is_some_and(|raw| {
                    matches!(
                        raw.to_ascii_lowercase().as_str(),
                        "todo" | "pending" | "skipped" | "skip" | "disabled" | "ignored" | "notrun"
                    )
                }) =>
            {
                TestOutcome::Skipped
            }
            "other" => TestOutcome::Error,
            other => {
                return Err(format!(
                    "results.tests[{index}]: unknown status `{other}` (CTRF has passed, failed, skipped, pending, other)"
                ));
            }
        };
        let suite = match &test.suite {
            Some(Suite::One(name)) => name.clone(),
            Some(Suite::Path(names)) => names.join(" › "),
            None => String::new(),
        };
        sink.add(Found {
            suite: &suite,
            name: &test.name,
            outcome: Some(outcome),
            duration_ms: test
                .duration
                .filter(|d| d.is_finite() && *d >= 0.0)
                .map(|d| d.round() as u64),
            message: test.message.as_deref().unwrap_or_default(),
            output: test.trace.as_deref().unwrap_or_default(),
            file: test.file_path.as_deref(),
            line: test.line,
            package: None,
            outside: false,
        });
    }
    Ok(())
}

/// The end of a CTRF report: its `summary`'s totals the tests do not bear out are a
/// failure of the report.
pub(super) fn finish(summary: Option<&Summary>, listed: &Listed, sink: &mut Collector<'_>) {
    if let Some(summary) = summary {
        sink.hold_totals(&[
            (summary.failed, listed.failed, "failed"),
            (summary.tests, listed.tests, "tests"),
        ]);
    }
}
