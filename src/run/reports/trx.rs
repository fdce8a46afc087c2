//! TRX, the Visual Studio test results format (`dotnet test --logger trx`, vstest,
//! Microsoft.Testing.Platform, mstest.exe): a `<TestRun>` in the TeamTest namespace with
//! `<Results>` (a `<UnitTestResult>` per test, its data rows nested in `<InnerResults>`),
//! `<TestDefinitions>` (each test's `<TestMethod className>`) and a `<ResultSummary>`
//! with the run's outcome, its `<Counters>` and its run-level errors (`<RunInfos>`).
//!
//! Results come before the definitions that name their classes in what vstest writes
//! and after them in what mstest.exe wrote: a result whose class is not known yet is
//! listed at once and given its suite when the definitions have been read, so nothing
//! but a small index is held back.

use std::collections::HashMap;
use std::io::BufRead;

use quick_xml::events::BytesStart;

use super::xml::{self, Handler, attributes, count, kept, without_suite};
use super::{Collector, Found, MAX_CASES, ReadError, capture};
use crate::results::TestOutcome;

/// The namespace every TRX writer declares (`…/TeamTest/2010`; VS 2008's `…/2006`).
const NAMESPACE: &str = "http://microsoft.com/schemas/VisualStudio/TeamTest/";

/// The most test definitions whose class is kept.
const MAX_DEFINITIONS: usize = 2 * MAX_CASES;

/// The elements whose place matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Elem {
    TestRun,
    Results,
    /// A result: any element inside `<Results>` or `<InnerResults>`.
    Result,
    InnerResults,
    Output,
    ErrorInfo,
    TestDefinitions,
    /// A test's definition: any element inside `<TestDefinitions>`.
    Definition,
    ResultSummary,
    RunInfos,
    /// A `<RunInfo>` whose outcome is an error.
    RunError,
    /// An element whose text is kept (where it goes is in `into`).
    Kept,
    Other,
}

/// Where the text being read goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Nowhere,
    Message,
    Stack,
    Out,
    Err,
    RunError,
}

/// A result being read.
#[derive(Debug, Default)]
struct Open {
    test_id: String,
    name: String,
    outcome: Option<String>,
    duration_ms: Option<u64>,
    message: String,
    stack: String,
    out: String,
    err: String,
    /// Tests its inner results gave, and how many of them failed.
    rows: u64,
    failed_rows: u64,
    /// It holds an `<ErrorInfo>`: what went wrong.
    error_info: bool,
}

/// What `<Counters>` says.
#[derive(Debug, Default)]
struct Counters {
    total: Option<u64>,
    /// `failed` + `error` + `timeout` + `aborted`, when any is given.
    failures: Option<u64>,
}

struct Trx<'s, 'l> {
    sink: &'s mut Collector<'l>,
    path: Vec<Elem>,
    open: Vec<Open>,
    into: Target,
    /// A test's id → its class, from the definitions.
    classes: HashMap<String, String>,
    /// The definition being read.
    definition: Option<String>,
    /// Listed cases (their index) whose class was not known when they were read.
    pending: Vec<(usize, String)>,
    counters: Counters,
    /// The results as written, counted as `<Counters>` counts them: every result,
    /// inner ones and their parents alike, and those whose outcome is a failure.
    written: u64,
    written_failures: u64,
    /// Tests given to the sink that failed.
    failures: u64,
    summary_outcome: Option<String>,
    run_errors: String,
    /// A result said it passed but the run was aborted.
    run_aborted: bool,
}

/// Reads a TRX report into `sink`.
pub(super) fn read(source: impl BufRead, sink: &mut Collector<'_>) -> Result<(), ReadError> {
    let mut trx = Trx {
        sink,
        path: Vec::new(),
        open: Vec::new(),
        into: Target::Nowhere,
        classes: HashMap::new(),
        definition: None,
        pending: Vec::new(),
        counters: Counters::default(),
        written: 0,
        written_failures: 0,
        failures: 0,
        summary_outcome: None,
        run_errors: String::new(),
        run_aborted: false,
    };
    xml::read(source, &["TestRun"], "TRX", &mut trx)?;
    trx.finish();
    Ok(())
}

impl Handler for Trx<'_, '_> {
    fn open(&mut self, e: &BytesStart<'_>, at: u64) -> Result<(), ReadError> {
        let parent = self.path.last().copied();
        let name = e.local_name();
        let elem = match (parent, name.as_ref()) {
            (None, _) => {
                namespace(e, at)?;
                Elem::TestRun
            }
            (Some(Elem::TestRun), b"Results") => Elem::Results,
            (Some(Elem::Results | Elem::InnerResults), _) => {
                let [test_id, name, outcome, duration] =
                    attributes(e, [b"testId", b"testName", b"outcome", b"duration"], at)?;
                self.open.push(Open {
                    test_id: kept(test_id.unwrap_or_default()),
                    name: kept(name.unwrap_or_default()),
                    outcome: outcome.map(kept),
                    duration_ms: duration.as_deref().and_then(timespan_ms),
                    ..Open::default()
                });
                Elem::Result
            }
            (Some(Elem::Result), b"InnerResults") => Elem::InnerResults,
            (Some(Elem::Result), b"Output") => Elem::Output,
            (Some(Elem::Output), b"ErrorInfo") => {
                if let Some(result) = self.open.last_mut() {
                    result.error_info = true;
                }
                Elem::ErrorInfo
            }
            (Some(Elem::ErrorInfo), b"Message") => self.keep(Target::Message),
            (Some(Elem::ErrorInfo), b"StackTrace") => self.keep(Target::Stack),
            (Some(Elem::Output), b"StdOut") => self.keep(Target::Out),
            (Some(Elem::Output), b"StdErr") => self.keep(Target::Err),
            (Some(Elem::TestRun), b"TestDefinitions") => Elem::TestDefinitions,
            (Some(Elem::TestDefinitions), _) => {
                let [id] = attributes(e, [b"id"], at)?;
                self.definition = id.map(kept);
                Elem::Definition
            }
            (Some(Elem::Definition), b"TestMethod") => {
                let [class] = attributes(e, [b"className"], at)?;
                if let (Some(id), Some(class)) = (self.definition.take(), class)
                    && self.classes.len() < MAX_DEFINITIONS
                {
                    self.classes
                        .insert(id, kept(without_assembly(&class).to_owned()));
                }
                Elem::Other
            }
            (Some(Elem::TestRun), b"ResultSummary") => {
                let [outcome] = attributes(e, [b"outcome"], at)?;
                self.summary_outcome = outcome.map(kept);
                Elem::ResultSummary
            }
            (Some(Elem::ResultSummary), b"Counters") => {
                let keys: [&[u8]; 5] = [b"total", b"failed", b"error", b"timeout", b"aborted"];
                let [total, failed, error, timeout, aborted] = attributes(e, keys, at)?;
                let failures = [failed, error, timeout, aborted]
                    .iter()
                    .filter_map(|n| count(n.as_deref()))
                    .reduce(u64::saturating_add);
                self.counters = Counters {
                    total: count(total.as_deref()),
                    failures,
                };
                Elem::Other
            }
            (Some(Elem::ResultSummary), b"RunInfos") => Elem::RunInfos,
            (Some(Elem::RunInfos), b"RunInfo") => {
                let [outcome] = attributes(e, [b"outcome"], at)?;
                if outcome.as_deref().is_some_and(|o| failing(o.trim())) {
                    Elem::RunError
                } else {
                    Elem::Other
                }
            }
            (Some(Elem::RunError), b"Text") => self.keep(Target::RunError),
            _ => Elem::Other,
        };
        self.path.push(elem);
        Ok(())
    }

    fn close(&mut self, _name: &[u8]) -> Result<(), ReadError> {
        match self.path.pop() {
            Some(Elem::Result) => self.result_ends(),
            Some(Elem::Kept) => {
                if self.into == Target::RunError {
                    self.run_errors.push('\n');
                }
                self.into = Target::Nowhere;
            }
            Some(Elem::Definition) => self.definition = None,
            _ => {}
        }
        Ok(())
    }

    fn wants_text(&self) -> bool {
        self.into != Target::Nowhere
    }

    fn text(&mut self, text: &str) {
        if self.into == Target::RunError {
            capture(&mut self.run_errors, text);
            return;
        }
        let Some(open) = self.open.last_mut() else {
            return;
        };
        match self.into {
            Target::Message => capture(&mut open.message, text),
            Target::Stack => capture(&mut open.stack, text),
            Target::Out => capture(&mut open.out, text),
            Target::Err => capture(&mut open.err, text),
            Target::Nowhere | Target::RunError => {}
        }
    }
}

impl Trx<'_, '_> {
    fn keep(&mut self, into: Target) -> Elem {
        self.into = into;
        Elem::Kept
    }

    /// A result ends: a test of its own, unless its inner results were the tests (a
    /// data-driven test's rows, an ordered test's steps); then it is one only when it
    /// says it failed and none of them did.
    fn result_ends(&mut self) {
        let Some(result) = self.open.pop() else {
            return;
        };
        let word = result.outcome.as_deref().map(str::trim);
        self.written += 1;
        if word.is_some_and(|w| {
            ["Failed", "Error", "Timeout", "Aborted"]
                .iter()
                .any(|f| w.eq_ignore_ascii_case(f))
        }) {
            self.written_failures += 1;
        }
        let (outcome, why) = match outcome(word) {
            // Passed, and what went wrong beside it: not a pass. (A skipped test's
            // reason is written as an `<ErrorInfo>` too, so only a pass is held to it.)
            (TestOutcome::Passed, _) if result.error_info => (
                TestOutcome::Failed,
                Some(format!(
                    "the outcome says `{}`, but the result holds an <ErrorInfo>",
                    word.unwrap_or_default()
                )),
            ),
            read => read,
        };
        if word.is_some_and(|w| w.eq_ignore_ascii_case("PassedButRunAborted")) {
            self.run_aborted = true;
        }
        let (mut rows, mut failed_rows) = (result.rows, result.failed_rows);
        if rows == 0 || (outcome.is_failure() && failed_rows == 0) {
            self.deliver(&result, outcome, why.as_deref());
            rows += 1;
            failed_rows += u64::from(outcome.is_failure());
        }
        if let Some(parent) = self.open.last_mut() {
            parent.rows += rows;
            parent.failed_rows += failed_rows;
        }
    }

    fn deliver(&mut self, result: &Open, outcome: TestOutcome, why: Option<&str>) {
        let class = self.classes.get(&result.test_id);
        let suite = class.map_or("", String::as_str);
        let message = if result.message.trim().is_empty() {
            why.unwrap_or_default()
        } else {
            &result.message
        };
        let output = [&result.stack, &result.err, &result.out]
            .into_iter()
            .find(|t| !t.trim().is_empty())
            .map_or("", |t| t.as_str());
        let index = self.sink.cases.len();
        self.sink.add(Found {
            suite,
            name: without_suite(&result.name, suite),
            outcome: Some(outcome),
            duration_ms: result.duration_ms,
            message,
            output,
            ..Found::default()
        });
        self.failures += u64::from(outcome.is_failure());
        let listed = self.sink.cases.len() > index;
        if class.is_none() && listed && !result.test_id.is_empty() {
            self.pending.push((index, result.test_id.clone()));
        }
    }

    /// After the whole file: the classes of results read before their definitions, the
    /// counters held against the results, and a run that failed with no test failing.
    fn finish(&mut self) {
        for (index, id) in std::mem::take(&mut self.pending) {
            if let Some(class) = self.classes.get(&id) {
                self.sink.set_suite(index, class);
            }
        }
        let mut why = Vec::new();
        if let Some(n) = self
            .counters
            .failures
            .filter(|n| *n > self.written_failures)
        {
            why.push(format!(
                "{n} failed, its results show {}",
                self.written_failures
            ));
        }
        if let Some(n) = self.counters.total.filter(|n| *n > self.written) {
            why.push(format!("{n} tests, it lists {}", self.written));
        }
        if !why.is_empty() {
            let message = format!("the summary counts {}", why.join("; "));
            self.own_failure("(the report's summary)", &message);
        }
        if self.failures > 0 {
            return;
        }
        let errors = self.run_errors.trim();
        let summary = self.summary_outcome.as_deref().map(str::trim);
        let message = if !errors.is_empty() {
            errors.to_owned()
        } else if let Some(word) = summary.filter(|w| failing(w)) {
            format!("the run's outcome is `{word}`, its results show no failure")
        } else if self.run_aborted {
            "a test passed, but the run was aborted before the rest ran".to_owned()
        } else {
            return;
        };
        self.own_failure("(the run itself)", &message);
    }

    fn own_failure(&mut self, name: &str, message: &str) {
        self.failures += 1;
        self.sink.add(Found {
            name,
            outcome: Some(TestOutcome::Error),
            message,
            outside: true,
            ..Found::default()
        });
    }
}

/// The root must declare the TRX namespace: a `<TestRun>` of another kind of file is
/// not read as test results.
fn namespace(e: &BytesStart<'_>, at: u64) -> Result<(), ReadError> {
    for attr in e.attributes().with_checks(false) {
        let attr =
            attr.map_err(|err| ReadError::at_offset(format!("malformed attribute: {err}"), at))?;
        if attr.key.as_ref().starts_with(b"xmlns") && attr.value.starts_with(NAMESPACE.as_bytes()) {
            return Ok(());
        }
    }
    Err(ReadError::at_offset(
        format!("not a TRX report: its <TestRun> does not declare the namespace `{NAMESPACE}2010`"),
        at,
    ))
}

/// A result's outcome as a test's, and why when the word is not a plain pass, failure
/// or skip. Only `Passed` (and `PassedButRunAborted`, whose run is judged apart) is a
/// pass; `NotExecuted` and `Inconclusive` are not run; every other word — one that
/// says something went wrong, one that says the test never finished, one not known
/// here — is an error.
fn outcome(word: Option<&str>) -> (TestOutcome, Option<String>) {
    let Some(word) = word else {
        return (
            TestOutcome::Error,
            Some("the result gives no outcome".to_owned()),
        );
    };
    let is = |w: &str| word.eq_ignore_ascii_case(w);
    if is("Passed") || is("PassedButRunAborted") {
        (TestOutcome::Passed, None)
    } else if is("Failed") {
        (TestOutcome::Failed, None)
    } else if is("NotExecuted") || is("Inconclusive") {
        (TestOutcome::Skipped, None)
    } else {
        let what = match word.to_ascii_lowercase().as_str() {
            "error" | "timeout" | "aborted" | "disconnected" => "",
            "notrunnable" => ": the test could not be run",
            "warning" => ": a warning is not a pass",
            "completed" => ": it ended, but whether it passed is not said",
            "inprogress" | "pending" => ": it never finished",
            _ => ": not an outcome TRX defines",
        };
        (
            TestOutcome::Error,
            Some(format!("the result's outcome is `{word}`{what}")),
        )
    }
}

/// Whether a run-level outcome (the summary's, a run message's) says the run failed.
fn failing(word: &str) -> bool {
    ["Failed", "Error", "Timeout", "Aborted", "Disconnected"]
        .iter()
        .any(|f| word.eq_ignore_ascii_case(f))
}

/// A class name without the assembly mstest.exe wrote after it (`Ns.Class, Ns,
/// Version=1.0.0.0, …`); a generic's arguments, in brackets, keep their commas.
fn without_assembly(class: &str) -> &str {
    let mut depth = 0i32;
    for (i, c) in class.char_indices() {
        match c {
            '[' | '<' => depth += 1,
            ']' | '>' => depth -= 1,
            ',' if depth <= 0 => return class[..i].trim(),
            _ => {}
        }
    }
    class.trim()
}

/// A .NET `TimeSpan` as TRX writes it (`00:00:01.2345678`, `1.02:03:04.5`, days
/// before the dot) in milliseconds.
fn timespan_ms(text: &str) -> Option<u64> {
    let mut parts = text.trim().split(':');
    let (hours, minutes, seconds) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let (days, hours) = match hours.split_once('.') {
        Some((d, h)) => (d.parse::<u64>().ok()?, h.parse::<u64>().ok()?),
        None => (0, hours.parse::<u64>().ok()?),
    };
    let minutes: u64 = minutes.parse().ok()?;
    let seconds: f64 = seconds.parse().ok()?;
    if !seconds.is_finite() || seconds < 0.0 {
        return None;
    }
    let whole = days
        .checked_mul(24)?
        .checked_add(hours)?
        .checked_mul(60)?
        .checked_add(minutes)?
        .checked_mul(60_000)?;
    whole.checked_add((seconds * 1000.0).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timespans_and_class_names() {
        assert_eq!(timespan_ms("00:00:00.1084258"), Some(108));
        assert_eq!(timespan_ms("00:01:02.5"), Some(62_500));
        assert_eq!(timespan_ms("1.02:00:00"), Some(26 * 3_600_000));
        assert_eq!(timespan_ms("00:00:00"), Some(0));
        for bad in ["", "-00:00:01", "1:2", "a:b:c", "00:00:NaN", "1:2:3:4"] {
            assert_eq!(timespan_ms(bad), None, "{bad}");
        }
        assert_eq!(
            timespan_ms(&format!("{}:00:00", u64::MAX)),
            None,
            "overflow is no duration"
        );
        assert_eq!(
            without_assembly(
                "Prueba_Sistema.SIARAlgorithmTest, Prueba_Sistema, Version=1.0.0.0, Culture=neutral"
            ),
            "Prueba_Sistema.SIARAlgorithmTest"
        );
        assert_eq!(
            without_assembly("Ns.Generic`1[[System.Int32, mscorlib]], Ns"),
            "Ns.Generic`1[[System.Int32, mscorlib]]"
        );
        assert_eq!(without_assembly("Ns.Plain"), "Ns.Plain");
    }

    #[test]
    fn only_passed_passes() {
        for word in ["Passed", "passed", "PassedButRunAborted"] {
            assert_eq!(outcome(Some(word)).0, TestOutcome::Passed, "{word}");
        }
        for word in ["NotExecuted", "Inconclusive"] {
            assert_eq!(outcome(Some(word)).0, TestOutcome::Skipped, "{word}");
        }
        assert_eq!(outcome(Some("Failed")).0, TestOutcome::Failed);
        for word in [
            "Error",
            "Timeout",
            "Aborted",
            "Disconnected",
            "NotRunnable",
            "Warning",
            "Completed",
            "InProgress",
            "Pending",
            "Won",
            "",
        ] {
            assert_eq!(outcome(Some(word)).0, TestOutcome::Error, "{word}");
        }
        assert_eq!(outcome(None).0, TestOutcome::Error);
    }
}
