//! A report that is one JSON document: told apart by its top-level keys, read in one
//! pass. CTRF (`results`), Jest's and Vitest's `--json` (`testResults`), Mocha's
//! `--reporter json` (`stats` with `passes`, `failures`, `pending`) and RSpec's
//! `--format json` (`examples`). A document with none of these is no known report.

use std::io::BufRead;

use serde::Deserialize;

use super::{Collector, Format, ReadError, ctrf, jest, mocha, rspec};

/// Every format's top-level keys, each optional: which are present says the format.
/// (One struct, not one per format flattened: a report of 100,000 tests is read once,
/// never buffered first.)
#[derive(Deserialize)]
pub(super) struct Document {
    // CTRF.
    #[serde(default)]
    results: Option<ctrf::Results>,
    // Jest and Vitest.
    #[serde(default, rename = "testResults")]
    pub test_results: Option<Vec<jest::FileResult>>,
    #[serde(default, rename = "numTotalTests")]
    pub num_total_tests: Option<u64>,
    #[serde(default, rename = "numFailedTests")]
    pub num_failed_tests: Option<u64>,
    /// Jest only: test files that failed to run.
    #[serde(default, rename = "numRuntimeErrorTestSuites")]
    pub num_runtime_error_test_suites: Option<u64>,
    // Mocha.
    #[serde(default)]
    pub stats: Option<mocha::Stats>,
    #[serde(default)]
    pub passes: Option<Vec<mocha::Test>>,
    #[serde(default)]
    pub failures: Option<Vec<mocha::Test>>,
    #[serde(default)]
    pub pending: Option<Vec<mocha::Test>>,
    // RSpec.
    #[serde(default)]
    pub examples: Option<Vec<rspec::Example>>,
    #[serde(default)]
    pub summary: Option<rspec::Summary>,
    /// RSpec: what went wrong outside the examples (a file that failed to load).
    #[serde(default)]
    pub messages: Option<Vec<String>>,
}

/// Reads a JSON report into `sink`; the format it was.
pub(super) fn read(source: impl BufRead, sink: &mut Collector<'_>) -> Result<Format, ReadError> {
    let document: Document = serde_json::from_reader(source).map_err(|e| {
        ReadError::at_line(
            format!("not a JSON test report: {}", strip_position(&e.to_string())),
            e.line() as u64,
        )
    })?;
    if let Some(results) = &document.results {
        ctrf::collect(results, sink)?;
        Ok(Format::Ctrf)
    } else if document.test_results.is_some() {
        Ok(jest::collect(&document, sink))
    } else if document.stats.is_some() {
        mocha::collect(&document, sink)?;
        Ok(Format::MochaJson)
    } else if document.examples.is_some() {
        rspec::collect(&document, sink);
        Ok(Format::RspecJson)
    } else {
        Err(ReadError::new(
            "a JSON document that is no known test report: it has no `results` (CTRF), `testResults` (Jest, Vitest), `stats` (Mocha) or `examples` (RSpec)",
        ))
    }
}

/// serde_json's message without its " at line L column C" (the line is said apart).
pub(super) fn strip_position(message: &str) -> &str {
    message
        .rfind(" at line ")
        .map_or(message, |at| &message[..at])
}

/// Duration in milliseconds from a JSON number of `unit_ms` milliseconds each.
pub(super) fn millis(value: Option<f64>, unit_ms: f64) -> Option<u64> {
    value
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| (v * unit_ms).round().min(u64::MAX as f64) as u64)
}
