//! JUnit XML (docs/formats.md §7): one `<testsuite>` per environment, one `<testcase>` per
//! check with `classname` = the environment, and one per test of a check's runner
//! report (`classname` = `environment.check.suite`); written by `quick-junit`, the
//! serializer cargo-nextest uses.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestRerun, TestSuite};

use super::Quoted;
use super::view::Tails;
use crate::results::{MissingKind, Row, RowResult, TestOutcome};

/// An executed pair: a success, or a failure with its summary, exit code and log tail.
fn row_status(row: &Row, log: Option<&str>) -> TestCaseStatus {
    match row.result {
        RowResult::Pass => TestCaseStatus::success(),
        RowResult::Fail => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status.set_message(row.detail.summary.as_str());
            status.set_type(if row.required {
                "required check failed"
            } else {
                "optional check failed"
            });
            let mut text = format!("exit code {}", row.exit_code);
            if let Some(log) = log {
                text.push_str("\n\n");
                text.push_str(log);
            }
            status.set_description(text);
            status
        }
    }
}

/// The tests of a pair's runner report, each a test case of its own: `classname` is
/// `environment.check` and the test's suite, so consumers group them by both.
fn add_tests(suite: &mut TestSuite, row: &Row, env: &str) {
    let Some(tests) = &row.detail.tests else {
        return;
    };
    for test in &tests.cases {
        let status = match test.outcome {
            TestOutcome::Passed => TestCaseStatus::success(),
            TestOutcome::Skipped => TestCaseStatus::skipped(),
            TestOutcome::Flaky => {
                let mut status = TestCaseStatus::success();
                let mut rerun = TestRerun::new(NonSuccessKind::Failure);
                if let Some(message) = &test.message {
                    rerun.set_message(message.as_str());
                }
                status.add_rerun(rerun);
                status
            }
            TestOutcome::Failed | TestOutcome::Error => {
                let kind = if test.outcome == TestOutcome::Failed {
                    NonSuccessKind::Failure
                } else {
                    NonSuccessKind::Error
                };
                let mut status = TestCaseStatus::non_success(kind);
                if let Some(message) = &test.message {
                    status.set_message(message.as_str());
                }
                let mut text = String::new();
                if let Some(file) = &test.file {
                    text.push_str(file);
                    if let Some(line) = test.line {
                        text.push_str(&format!(":{line}"));
                    }
                    text.push('\n');
                }
                text.push_str(test.output.as_deref().unwrap_or_default());
                if !text.is_empty() {
                    status.set_description(text);
                }
                status
            }
        };
        let mut case = TestCase::new(test.name.as_str(), status);
        let classname = if test.suite.is_empty() {
            format!("{env}.{}", row.check)
        } else {
            format!("{env}.{}.{}", row.check, test.suite)
        };
        case.set_classname(classname);
        if let Some(ms) = test.duration_ms {
            case.set_time(Duration::from_millis(ms));
        }
        suite.add_test_case(case);
    }
}

/// A pair without a row: skipped when not run, an error otherwise.
fn missing_status(kind: MissingKind, reason: &str) -> TestCaseStatus {
    let mut status = match kind {
        MissingKind::NotRun => TestCaseStatus::skipped(),
        MissingKind::FailedToRun | MissingKind::NoResult => {
            TestCaseStatus::non_success(NonSuccessKind::Error)
        }
    };
    status.set_message(reason);
    match kind {
        MissingKind::NotRun => {}
        MissingKind::FailedToRun => {
            status.set_type("failed to run");
        }
        MissingKind::NoResult => {
            status.set_type("missing");
        }
    }
    status
}

/// Renders the report as JUnit XML. Each suite is written (by quick-junit) and let go
/// before the next is made, so a report of GitHub's largest matrix never holds a test
/// case per pair; the `<testsuites>` element around them carries the totals.
pub fn render(report: &Quoted, tails: &Tails) -> String {
    let mut totals = quick_junit::Report::new("Environment Verification Matrix");
    let mut suites = String::new();
    let (rows_in, missing_in) = pairs_by_environment(report);
    for (e, env) in report.environments.iter().enumerate() {
        let mut suite = TestSuite::new(env.as_str());
        suite.add_property(Property::new("verdict", report.verdict.as_str()));
        let mut total_ms = 0;
        for &index in &rows_in[e] {
            let row = &report.rows[index];
            let d = &row.detail;
            total_ms += d.duration_ms;
            let status = row_status(row, tails.of(index));
            let mut case = TestCase::new(row.check.as_str(), status);
            case.set_classname(env.as_str());
            case.set_time(Duration::from_millis(d.duration_ms));
            suite.add_test_case(case);
            add_tests(&mut suite, row, env.as_str());
        }
        for &index in &missing_in[e] {
            let missing = &report.missing[index];
            let status = missing_status(report.missing_kind(missing), &missing.reason);
            let mut case = TestCase::new(missing.check.as_str(), status);
            case.set_classname(env.as_str());
            suite.add_test_case(case);
        }
        suite.set_time(Duration::from_millis(total_ms));
        write_suite(&mut totals, suite, &mut suites);
    }
    if !report.manual.is_empty() {
        let mut suite = TestSuite::new("manual review");
        for item in &report.manual {
            let mut status = TestCaseStatus::skipped();
            status.set_message(format!(
                "awaiting manual review ({}): {}",
                item.kind, item.text
            ));
            let mut case = TestCase::new(item.id.as_str(), status);
            case.set_classname("manual");
            suite.add_test_case(case);
        }
        write_suite(&mut totals, suite, &mut suites);
    }
    // The frame: the declaration and `<testsuites …>` with the totals, and its end tag.
    let frame = totals.to_string().unwrap_or_default();
    let (head, tail) = frame.split_at(frame.rfind(END_TAG).unwrap_or(frame.len()));
    let mut xml = String::with_capacity(frame.len() + suites.len() + 1);
    xml.push_str(head);
    xml.push_str(&suites);
    xml.push_str(tail);
    if !xml.ends_with('\n') {
        xml.push('\n');
    }
    xml
}

const END_TAG: &str = "</testsuites>";

/// The positions of each environment's rows and missing pairs, in report order.
fn pairs_by_environment(report: &Quoted) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
    let place: rustc_hash::FxHashMap<&str, usize> = report
        .environments
        .iter()
        .enumerate()
        .map(|(e, env)| (env.as_str(), e))
        .collect();
    let mut rows = vec![Vec::new(); report.environments.len()];
    let mut missing = vec![Vec::new(); report.environments.len()];
    for (index, row) in report.rows.iter().enumerate() {
        if let Some(&e) = place.get(row.environment.as_str()) {
            rows[e].push(index);
        }
    }
    for (index, m) in report.missing.iter().enumerate() {
        if let Some(&e) = place.get(m.environment.as_str()) {
            missing[e].push(index);
        }
    }
    (rows, missing)
}

/// Adds `suite` to the totals and appends its XML (as quick-junit writes it inside
/// `<testsuites>`) to `out`.
fn write_suite(totals: &mut quick_junit::Report, suite: TestSuite, out: &mut String) {
    totals.add_test_suite(suite);
    let xml = totals.to_string().unwrap_or_default();
    totals.test_suites.clear();
    // Between the line that opens `<testsuites …>` and the one that closes it.
    let start = xml
        .find("<testsuites")
        .and_then(|open| xml[open..].find('\n').map(|end| open + end + 1));
    let end = xml
        .rfind(END_TAG)
        .and_then(|close| xml[..close].rfind('\n'));
    if let (Some(start), Some(end)) = (start, end)
        && start <= end + 1
    {
        out.push_str(&xml[start..=end]);
    }
}
