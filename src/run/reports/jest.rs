//! Jest's `--json` and Vitest's `--reporter=json` (the same shape): `testResults`, one
//! per test file (`name` its path, `status`, `message`), each with `assertionResults`
//! (`ancestorTitles`, `title`, `status`, `duration`, `failureMessages`, `location`;
//! Jest's `invocations`), and the run's totals (`numTotalTests`, `numFailedTests`,
//! Jest's `numRuntimeErrorTestSuites`).
//!
//! A test is its file and its `describe()` path: `test/sum.test.js › sum › negatives`
//! and the title. Statuses `passed`, `failed`, `pending`/`skipped`/`todo`/`disabled`
//! (not run); anything else did not pass. A test that passed after a retry is flaky:
//! Jest counts its `invocations`, Vitest keeps the earlier attempts' `failureMessages`.
//! A file that failed with no failing test (it failed to load, a hook failed) is a
//! failure of its own, with the file's message.

use serde::Deserialize;

use super::json::{Listed, Totals, millis};
use super::{Collector, Format, Found};
use crate::results::TestOutcome;

/// One test file's results.
#[derive(Deserialize)]
pub(in crate::run::reports) struct FileResult {
    #[serde(default)]
    name: String,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default, rename = "assertionResults")]
    assertion_results: Vec<Assertion>,
    /// Jest: why the file could not run.
    #[serde(default, rename = "testExecError")]
    test_exec_error: Option<serde::de::IgnoredAny>,
}

impl FileResult {
    /// The file did not pass by its own word: `failed`, a status not known to say it
    /// passed or did not run, or an error that kept it from running.
    fn failed(&self) -> bool {
        let known = matches!(
            self.status.as_deref(),
            None | Some("passed" | "pending" | "skipped" | "skip" | "todo" | "disabled")
        );
        !known || self.test_exec_error.is_some()
    }
}

#[derive(Deserialize)]
struct Assertion {
    #[serde(default, rename = "ancestorTitles")]
    ancestor_titles: Vec<String>,
    #[serde(default)]
    title: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default, rename = "failureMessages")]
    failure_messages: Vec<String>,
    #[serde(default)]
    invocations: Option<u64>,
    #[serde(default)]
    location: Option<Location>,
}

#[derive(Deserialize)]
struct Location {
    #[serde(default)]
    line: Option<u32>,
}

/// Reads one test file's results (an item of `testResults`) into `sink`.
pub(super) fn add_file(file: &FileResult, sink: &mut Collector<'_>, listed: &mut Listed) {
    let Listed {
        tests: listed,
        failed,
        files_failed,
        ..
    } = listed;
    let mut file_failed = false;
    for test in &file.assertion_results {
        *listed += 1;
        let retried = test.invocations.is_some_and(|n| n > 1) || !test.failure_messages.is_empty();
        let outcome = match test.status.as_str() {
            "passed" if retried => TestOutcome::Flaky,
            "passed" => TestOutcome::Passed,
            "failed" => TestOutcome::Failed,
            "pending" | "skipped" | "todo" | "disabled" => TestOutcome::Skipped,
            _ => TestOutcome::Error,
        };
        if outcome.is_failure() {
            *failed += 1;
            file_failed = true;
        }
        let mut suite = file.name.clone();
        for ancestor in &test.ancestor_titles {
            suite.push_str(" › ");
            suite.push_str(ancestor);
        }
        let output = test.failure_messages.join("\n");
        sink.add(Found {
            suite: &suite,
            name: &test.title,
            outcome: Some(outcome),
            duration_ms: millis(test.duration, 1.0),
            message: test
                .failure_messages
                .first()
                .map(String::as_str)
                .unwrap_or_default(),
            output: &output,
            file: Some(&file.name)
                .filter(|f| !f.is_empty())
                .map(String::as_str),
            line: test.location.as_ref().and_then(|l| l.line),
            package: None,
            outside: false,
        });
    }
    *files_failed += u64::from(file_failed || file.failed());
    // A file that failed with no failing test: it failed to load, or a hook failed.
    if file.failed() && !file_failed {
        *failed += 1;
        let message = file.message.as_deref().unwrap_or_default();
        sink.add(Found {
            suite: &file.name,
            name: "(the test file itself)",
            outcome: Some(TestOutcome::Error),
            message: if message.trim().is_empty() {
                "the test file failed to run"
            } else {
                message
            },
            output: message,
            file: Some(&file.name)
                .filter(|f| !f.is_empty())
                .map(String::as_str),
            outside: true,
            ..Found::default()
        });
    }
}

/// The run's totals held against the files read; which of the two runners wrote it.
pub(super) fn finish(totals: &Totals, listed: &Listed, sink: &mut Collector<'_>) -> Format {
    let Listed {
        tests: listed,
        failed,
        files_failed,
        ..
    } = *listed;
    sink.hold_totals(&[
        (totals.num_failed_tests, failed, "failed"),
        (totals.num_total_tests, listed, "tests"),
        // Jest's count of files that failed to run (Vitest's `numFailedTestSuites`
        // counts `describe()` blocks too, so it is not held against the files).
        (
            totals.num_runtime_error_test_suites,
            files_failed,
            "test files that failed to run",
        ),
    ]);
    // The run's own word: it did not succeed, and nothing listed says why (Vitest's
    // unhandled errors, a failed global set-up).
    if totals.success == Some(false) && failed == 0 {
        sink.add(Found {
            name: "(the run itself)",
            outcome: Some(TestOutcome::Error),
            message: "the report says the run did not succeed (`success: false`), and no test in it failed: an error outside the tests (an unhandled error, a global set-up)",
            outside: true,
            ..Found::default()
        });
    }
    // Only Jest writes how many files failed to run.
    if totals.num_runtime_error_test_suites.is_some() {
        Format::JestJson
    } else {
        Format::VitestJson
    }
}
