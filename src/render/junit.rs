//! JUnit XML (docs/formats.md §7): one `<testsuite>` per environment, one `<testcase>` per
//! check with `classname` = the environment, written by `quick-junit`, the serializer
//! cargo-nextest uses; and after each environment's suite one per pair with a runner
//! report, a `<testcase>` per test (`classname` = `environment.check.suite`).

use std::time::Duration;

use std::fmt::Write as _;

use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

use super::Quoted;
use super::view::Tails;
use crate::results::{MissingKind, Row, RowResult, TestOutcome};

/// An executed pair: a success, or a failure with its summary, exit code and log tail.
/// An optional check's failure is skipped with its message: it never blocks, and JUnit
/// consumers fail a build on any `<failure>`.
fn row_status(row: &Row, log: Option<&str>) -> TestCaseStatus {
    match row.result {
        RowResult::Pass => TestCaseStatus::success(),
        RowResult::Fail if !row.required => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(format!(
                "optional check failed (does not block): {}",
                row.detail.summary
            ));
            status.set_type("optional check failed");
            status
        }
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

/// What a pair's tests add to the totals.
#[derive(Debug, Default, Clone, Copy)]
struct Added {
    tests: usize,
    failures: usize,
    errors: usize,
}

/// The tests of a pair's runner report as a `<testsuite>` of their own (named
/// `environment.check`), one `<testcase>` per test with `classname` =
/// `environment.check.suite`, appended to `out`. Written with quick-xml's escaping
/// rather than quick-junit: the text was cleaned when the report was quoted, and a
/// million test cases must not each go through an ANSI-stripping pass.
fn tests_suite(row: &Row, env: &str, out: &mut String) -> Added {
    use quick_xml::escape::escape;
    let Some(tests) = &row.detail.tests else {
        return Added::default();
    };
    let mut added = Added::default();
    let mut skipped = 0;
    let mut total_ms = 0;
    let mut cases = String::with_capacity(tests.cases.len() * 96);
    let prefix = format!("{env}.{}", row.check);
    for test in &tests.cases {
        added.tests += 1;
        total_ms += test.duration_ms.unwrap_or(0);
        let classname = if test.suite.is_empty() {
            escape(prefix.as_str())
        } else {
            escape(format!("{prefix}.{}", test.suite))
                .into_owned()
                .into()
        };
        let _ = write!(
            cases,
            "        <testcase name=\"{}\" classname=\"{classname}\"",
            escape(test.name.as_str())
        );
        if let Some(ms) = test.duration_ms {
            let _ = write!(cases, " time=\"{}\"", seconds(ms));
        }
        let message = test
            .message
            .as_deref()
            // A line break in an attribute would be read as a space.
            .map(|m| format!(" message=\"{}\"", escape(m).replace('\n', "&#10;")))
            .unwrap_or_default();
        match test.outcome {
            TestOutcome::Passed => cases.push_str("/>\n"),
            TestOutcome::Skipped => {
                skipped += 1;
                cases.push_str(">\n            <skipped/>\n        </testcase>\n");
            }
            TestOutcome::Flaky => {
                let _ = write!(
                    cases,
                    ">\n            <flakyFailure{message}/>\n        </testcase>\n"
                );
            }
            // An optional check's failing tests do not fail the build either.
            TestOutcome::Failed | TestOutcome::Error if !row.required => {
                skipped += 1;
                let _ = write!(
                    cases,
                    ">\n            <skipped message=\"{}\"/>\n        </testcase>\n",
                    escape(
                        format!(
                            "optional check failed (does not block): {}",
                            test.message.as_deref().unwrap_or("failed")
                        )
                        .as_str()
                    )
                    .replace('\n', "&#10;")
                );
            }
            TestOutcome::Failed | TestOutcome::Error => {
                let element = if test.outcome == TestOutcome::Failed {
                    added.failures += 1;
                    "failure"
                } else {
                    added.errors += 1;
                    "error"
                };
                let mut text = String::new();
                if let Some(file) = &test.file {
                    text.push_str(file);
                    if let Some(line) = test.line {
                        let _ = write!(text, ":{line}");
                    }
                    text.push('\n');
                }
                text.push_str(test.output.as_deref().unwrap_or_default());
                let _ = write!(
                    cases,
                    ">\n            <{element}{message}>{}</{element}>\n        </testcase>\n",
                    escape(text.as_str())
                );
            }
        }
    }
    let _ = writeln!(
        out,
        "    <testsuite name=\"{}\" tests=\"{}\" skipped=\"{skipped}\" failures=\"{}\" errors=\"{}\" time=\"{}\">",
        escape(prefix.as_str()),
        added.tests,
        added.failures,
        added.errors,
        seconds(total_ms)
    );
    out.push_str(&cases);
    out.push_str("    </testsuite>\n");
    added
}

/// Milliseconds as JUnit's seconds (`0.012`).
fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
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
    let mut with_tests = Vec::new();
    let mut added = Added::default();
    for (e, env) in report.environments.iter().enumerate() {
        let mut suite = TestSuite::new(env.as_str());
        suite.add_property(Property::new("verdict", report.verdict.as_str()));
        // Where the environment ran: its machine's facts (the first place of it).
        if let Some(place) = report.places.iter().find(|p| p.environment == *env) {
            let r = &place.runner;
            let mut property = |name: &str, value: Option<&str>| {
                if let Some(value) = value.filter(|v| !v.is_empty()) {
                    suite.add_property(Property::new(name, value));
                }
            };
            property("runner.os", Some(&r.os));
            property("runner.arch", Some(&r.arch));
            property("runner.os_name", r.os_name.as_deref());
            property("runner.os_version", r.os_version.as_deref());
            property("runner.kernel", r.kernel.as_deref());
            property("runner.libc", r.libc.as_deref());
            let container = r.container.map(|c| if c { "true" } else { "false" });
            property("runner.container", container);
            property("runner.machine", r.machine.as_deref());
            let hosted = r.actions.as_ref().and_then(|a| a.environment.as_deref());
            property("runner.environment", hosted);
            property("runner.mismatch", place.mismatch.as_deref());
        }
        let mut total_ms = 0;
        for &index in &rows_in[e] {
            let row = &report.rows[index];
            let d = &row.detail;
            total_ms += d.duration_ms;
            if row.detail.tests.is_some() {
                with_tests.push(index);
            }
            // A required failure is counted once: by its failing tests, in the suite
            // `ENV.CHECK` that follows, when its runner's report lists any; by the
            // check's own test case only when none does (a build break, a timeout).
            if row.result == RowResult::Fail
                && row.required
                && crate::render::tests_view::failing(d).next().is_some()
            {
                continue;
            }
            let status = row_status(row, tails.of(index));
            let mut case = TestCase::new(row.check.as_str(), status);
            case.set_classname(env.as_str());
            case.set_time(Duration::from_millis(d.duration_ms));
            suite.add_test_case(case);
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
        for index in with_tests.drain(..) {
            let more = tests_suite(&report.rows[index], env.as_str(), &mut suites);
            added.tests += more.tests;
            added.failures += more.failures;
            added.errors += more.errors;
        }
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
    // The frame: the declaration and `<testsuites …>` with the totals (the tests'
    // suites included), and its end tag.
    totals.tests += added.tests;
    totals.failures += added.failures;
    totals.errors += added.errors;
    let frame = totals.to_string().unwrap_or_default();
    let (head, tail) = frame.split_at(frame.rfind(END_TAG).unwrap_or(frame.len()));
    // Put around the suites in place: a report's tests make them hundreds of megabytes.
    let mut xml = suites;
    xml.reserve(frame.len() + 1);
    xml.insert_str(0, head);
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
