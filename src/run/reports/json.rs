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
    /// Whether the run succeeded, by the runner's own word.
    #[serde(default)]
    pub success: Option<bool>,
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

/// Each format's key: the one a document of that format has and no other format's has.
const KEYS: [(&str, &str, Format); 4] = [
    ("results", "CTRF", Format::Ctrf),
    ("testResults", "Jest, Vitest", Format::JestJson),
    ("stats", "Mocha", Format::MochaJson),
    ("examples", "RSpec", Format::RspecJson),
];

/// Reads a JSON report into `sink`, in the format `forced` names, else in the one its
/// keys show; the format it was. A document with the keys of two formats is refused
/// unless the format is named: which one the runner meant cannot be told.
pub(super) fn read(
    source: impl BufRead,
    forced: Option<Format>,
    sink: &mut Collector<'_>,
) -> Result<Format, ReadError> {
    let document: Document = serde_json::from_reader(source).map_err(|e| {
        ReadError::at_line(
            format!("not a JSON test report: {}", strip_position(&e.to_string())),
            e.line() as u64,
        )
    })?;
    let present = [
        document.results.is_some(),
        document.test_results.is_some(),
        document.stats.is_some(),
        document.examples.is_some(),
    ];
    let found: Vec<_> = KEYS
        .iter()
        .zip(present)
        .filter_map(|(key, present)| present.then_some(key))
        .collect();
    let format = match (forced, found.as_slice()) {
        (Some(format), _) => format,
        (None, [(_, _, format)]) => *format,
        (None, []) => {
            return Err(ReadError::new(
                "a JSON document that is no known test report: it has no `results` (CTRF), `testResults` (Jest, Vitest), `stats` (Mocha) or `examples` (RSpec)",
            ));
        }
        (None, several) => {
            let named: Vec<String> = several
                .iter()
                .map(|(key, who, _)| format!("`{key}` ({who})"))
                .collect();
            return Err(ReadError::new(format!(
                "a JSON document with the keys of more than one report format: {}; name its format (`reports: {{ path, format }}`)",
                named.join(" and ")
            )));
        }
    };
    let missing = |key: &str| {
        ReadError::new(format!(
            "not a {format} report: the document has no `{key}`"
        ))
    };
    match format {
        Format::Ctrf => {
            let results = document
                .results
                .as_ref()
                .ok_or_else(|| missing("results"))?;
            ctrf::collect(results, sink)?;
            Ok(Format::Ctrf)
        }
        Format::JestJson | Format::VitestJson => {
            if document.test_results.is_none() {
                return Err(missing("testResults"));
            }
            let told = jest::collect(&document, sink);
            Ok(forced.unwrap_or(told))
        }
        Format::MochaJson => {
            if document.stats.is_none() {
                return Err(missing("stats"));
            }
            mocha::collect(&document, sink)?;
            Ok(Format::MochaJson)
        }
        Format::RspecJson => {
            if document.examples.is_none() {
                return Err(missing("examples"));
            }
            rspec::collect(&document, sink);
            Ok(Format::RspecJson)
        }
        other => Err(ReadError::new(format!(
            "not a {other} report: the file is one JSON document"
        ))),
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
