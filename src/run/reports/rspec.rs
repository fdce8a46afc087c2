//! RSpec's `--format json`: `examples` (each `full_description`, `status`, `file_path`,
//! `line_number`, `run_time`, `pending_message`, `exception` with `class`, `message` and
//! `backtrace`), the `summary` (`example_count`, `failure_count`, `pending_count`,
//! `errors_outside_of_examples_count`) and, for errors outside the examples (a spec file
//! that failed to load), `messages`. A test is its file and its full description.
//! Statuses `passed`, `failed`, `pending` (not run, or run and expected to fail);
//! anything else did not pass.

use serde::Deserialize;

use super::json::{Listed, millis};
use super::{Collector, Found};
use crate::results::TestOutcome;

#[derive(Deserialize)]
pub(in crate::run::reports) struct Example {
    #[serde(default)]
    description: String,
    #[serde(default)]
    full_description: Option<String>,
    #[serde(default)]
    status: String,
    #[serde(default)]
    file_path: Option<String>,
    #[serde(default)]
    line_number: Option<u32>,
    #[serde(default)]
    run_time: Option<f64>,
    #[serde(default)]
    pending_message: Option<String>,
    #[serde(default)]
    exception: Option<Exception>,
}

#[derive(Deserialize)]
struct Exception {
    #[serde(default)]
    class: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    backtrace: Option<Vec<String>>,
}

#[derive(Deserialize)]
pub(in crate::run::reports) struct Summary {
    #[serde(default)]
    example_count: Option<u64>,
    #[serde(default)]
    failure_count: Option<u64>,
    #[serde(default)]
    errors_outside_of_examples_count: Option<u64>,
}

/// Reads one of RSpec's `examples` into `sink`.
pub(super) fn add(example: &Example, sink: &mut Collector<'_>, listed: &mut Listed) {
    listed.tests += 1;
    {
        let outcome = match example.status.as_str() {
            "passed" => TestOutcome::Passed,
            "failed" => TestOutcome::Failed,
            "pending" => TestOutcome::Skipped,
            _ => TestOutcome::Error,
        };
        listed.failed += u64::from(outcome.is_failure());
        let exception = example.exception.as_ref();
        let message = match exception {
            Some(e) => format!(
                "{}{}",
                e.class
                    .as_deref()
                    .map_or(String::new(), |c| format!("{c}: ")),
                e.message.as_deref().unwrap_or_default().trim()
            ),
            None => example.pending_message.clone().unwrap_or_default(),
        };
        let backtrace = exception
            .and_then(|e| e.backtrace.as_ref())
            .map(|lines| lines.join("\n"))
            .unwrap_or_default();
        let file = example
            .file_path
            .as_deref()
            .map(|f| f.strip_prefix("./").unwrap_or(f));
        sink.add(Found {
            suite: file.unwrap_or_default(),
            name: example
                .full_description
                .as_deref()
                .unwrap_or(&example.description),
            outcome: Some(outcome),
            duration_ms: millis(example.run_time, 1000.0),
            message: &message,
            output: &backtrace,
            file,
            line: example.line_number,
            package: None,
            outside: false,
        });
    }
}

/// The end of RSpec's JSON: errors outside the examples, and the `summary` held
/// against the examples read.
pub(super) fn finish(
    summary: Option<&Summary>,
    messages: &[String],
    listed: &Listed,
    sink: &mut Collector<'_>,
) {
    // Errors outside the examples (a spec file that failed to load) fail the run.
    // RSpec's count, or its messages' own word where the count says none.
    let said = messages
        .iter()
        .filter(|m| m.trim_start().starts_with("An error occurred"))
        .count() as u64;
    let outside = summary
        .and_then(|s| s.errors_outside_of_examples_count)
        .unwrap_or(0)
        .max(said);
    if outside > 0 {
        let messages = messages.join("\n");
        sink.add(Found {
            name: "(errors outside of examples)",
            outcome: Some(TestOutcome::Error),
            message: &format!("{outside} error(s) occurred outside of examples"),
            output: &messages,
            outside: true,
            ..Found::default()
        });
    }
    sink.hold_totals(&[
        (
            summary.and_then(|s| s.failure_count),
            listed.failed,
            "failures",
        ),
        (
            summary.and_then(|s| s.example_count),
            listed.tests,
            "examples",
        ),
    ]);
}
