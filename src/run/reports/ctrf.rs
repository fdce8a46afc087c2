//! CTRF (Common Test Report Format) JSON: `{"results": {"tool": …, "summary": …,
//! "tests": [{"name", "status", "duration", "message", "trace", "filePath", "line",
//! "suite", "flaky", …}]}}`. Statuses `passed`, `failed`, `skipped`, `pending`, `other`.

use std::io::BufRead;

use serde::Deserialize;

use super::{Collector, Found, ReadError};
use crate::results::TestOutcome;

#[derive(Deserialize)]
struct Document {
    results: Results,
}

#[derive(Deserialize)]
struct Results {
    tests: Vec<Test>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Test {
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
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Suite {
    One(String),
    Path(Vec<String>),
}

/// Reads a CTRF report into `sink`.
pub(super) fn read(source: impl BufRead, sink: &mut Collector<'_>) -> Result<(), ReadError> {
    let document: Document = serde_json::from_reader(source).map_err(|e| {
        ReadError::at_line(
            format!("not a CTRF report: {}", strip_position(&e.to_string())),
            e.line() as u64,
        )
    })?;
    for (index, test) in document.results.tests.iter().enumerate() {
        let outcome = match test.status.as_str() {
            "passed" if test.flaky == Some(true) => TestOutcome::Flaky,
            "passed" => TestOutcome::Passed,
            "failed" => TestOutcome::Failed,
            // Not run, one way or another: never a pass.
            "skipped" | "pending" | "other" => TestOutcome::Skipped,
            other => {
                return Err(ReadError::new(format!(
                    "results.tests[{index}]: unknown status `{other}` (CTRF has passed, failed, skipped, pending, other)"
                )));
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
        });
    }
    Ok(())
}

/// serde_json's message without its " at line L column C" (the line is said apart).
fn strip_position(message: &str) -> &str {
    message
        .rfind(" at line ")
        .map_or(message, |at| &message[..at])
}
