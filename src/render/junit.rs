//! JUnit XML (docs/formats.md §7): one `<testsuite>` per environment, one `<testcase>` per
//! check with `classname` = the environment; written by `quick-junit`, the serializer
//! cargo-nextest uses.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

use super::Quoted;
use super::view::Tails;
use crate::results::{MissingKind, Row, RowResult};

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

/// Renders the report as JUnit XML.
pub fn render(report: &Quoted, tails: &Tails) -> String {
    let mut junit = quick_junit::Report::new("Environment Verification Matrix");
    for env in &report.environments {
        let mut suite = TestSuite::new(env.as_str());
        suite.add_property(Property::new("verdict", report.verdict.as_str()));
        let mut total_ms = 0;
        let rows = report.rows.iter().enumerate();
        for (index, row) in rows.filter(|(_, r)| r.environment == *env) {
            let d = &row.detail;
            total_ms += d.duration_ms;
            let status = row_status(row, tails.of(index));
            let mut case = TestCase::new(row.check.as_str(), status);
            case.set_classname(env.as_str());
            case.set_time(Duration::from_millis(d.duration_ms));
            suite.add_test_case(case);
        }
        for missing in report.missing.iter().filter(|m| m.environment == *env) {
            let status = missing_status(report.missing_kind(missing), &missing.reason);
            let mut case = TestCase::new(missing.check.as_str(), status);
            case.set_classname(env.as_str());
            suite.add_test_case(case);
        }
        suite.set_time(Duration::from_millis(total_ms));
        junit.add_test_suite(suite);
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
        junit.add_test_suite(suite);
    }
    let mut xml = junit.to_string().unwrap_or_default();
    if !xml.ends_with('\n') {
        xml.push('\n');
    }
    xml
}
