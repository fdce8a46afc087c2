//! JUnit XML, in the dialects runners write: `<testsuites>` or a lone `<testsuite>` at
//! the root, suites nested in suites (PHPUnit, Jest per file), `<testcase>` with
//! `classname`, `time`, and sometimes `file` and `line`; `<failure>`, `<error>`,
//! `<skipped>`; nextest's and Surefire's `<flakyFailure>`/`<flakyError>` (failed, then
//! passed) and `<rerunFailure>`/`<rerunError>` (failed again); `<system-out>` and
//! `<system-err>`. Read as a stream of events with quick-xml, never whole.

use std::collections::HashMap;
use std::io::BufRead;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use super::{Collector, Found, ReadError, capture, seconds_to_ms};
use crate::results::TestOutcome;

/// What Node's test runner writes as every case's `classname`.
const NODE_CLASSNAME: &str = "test";
/// Between the names of nested suites in a test's suite (as CTRF's suite paths read).
const SUITE_PATH: &str = " › ";

/// The deepest element nesting read.
const MAX_DEPTH: usize = 64;

/// Where the text being read goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Nowhere,
    Failure,
    Out,
    Err,
    /// A suite's own output after the one case it holds (Bazel writes its test's log
    /// beside the case, in the suite): that case's.
    SuiteOut,
    SuiteErr,
}

/// The test case being read.
#[derive(Debug, Default)]
struct Case {
    suite: String,
    name: String,
    file: Option<String>,
    line: Option<u32>,
    duration_ms: Option<u64>,
    failed: bool,
    errored: bool,
    skipped: bool,
    flaky: bool,
    message: String,
    failure: String,
    out: String,
    err: String,
    /// How many times the test ran in a row (pytest-rerunfailures repeats the case).
    attempts: u32,
    /// Not a test: the suite's own failure.
    outside: bool,
    /// Earlier runs it failed, written inside it (Surefire's and nextest's
    /// `<rerunFailure>`, `<flakyFailure>`, …): a suite's `failures` may count them.
    reruns_failed: u64,
    /// It holds a `<rerunFailure>`/`<rerunError>`: a run after the first failed too.
    failed_again: bool,
    /// Catch2's `[!mayfail]`: a failure is allowed (Catch2 counts it "failed as
    /// expected", and its run passes).
    may_fail: bool,
}

/// What Catch2's JUnit reporter writes in a `[!mayfail]` test's `<skipped>`.
const CATCH2_MAY_FAIL: &str = "TEST_CASE tagged with !mayfail";

impl Case {
    fn outcome(&self) -> TestOutcome {
        if self.may_fail && self.failed && !self.errored {
            // Catch2's allowed failure: neither a pass nor a failure of the run, as a
            // skipped test is.
            TestOutcome::Skipped
        } else if self.failed || (self.failed_again && !self.errored) {
            // A rerun that failed says the test failed, whatever else the case holds:
            // Surefire writes it beside the `<failure>` of a test that never passed.
            TestOutcome::Failed
        } else if self.errored {
            TestOutcome::Error
        } else if self.skipped {
            TestOutcome::Skipped
        } else if self.flaky || self.attempts > 1 {
            TestOutcome::Flaky
        } else {
            TestOutcome::Passed
        }
    }
}

/// mocha-junit-reporter (Mocha's, and Cypress's built-in `junit` reporter) writes a
/// test's full title (its `describe()` titles and its own, joined by spaces) as `name`
/// and its own title as `classname` (or the two the other way round, with
/// `testCaseSwitchClassnameAndName`), in a flat suite named by the innermost
/// `describe()`: the test is its own title in the suite of the titles before it.
fn mocha_title(case: &mut Case, innermost: &str) {
    let split = |full: &str, title: &str| -> Option<String> {
        let path = full.strip_suffix(title)?.strip_suffix(' ')?;
        let named = path
            .strip_suffix(innermost)
            .is_some_and(|before| before.is_empty() || before.ends_with(' '));
        (!title.is_empty() && named).then(|| path.to_owned())
    };
    if let Some(path) = split(&case.name, &case.suite) {
        case.name = std::mem::replace(&mut case.suite, path);
    } else if let Some(path) = split(&case.suite, &case.name) {
        case.suite = path;
    }
}

/// Finished cases on their way to the sink. A case repeated right after itself (same
/// suite and name) is a rerun only where the runner reports retries that way and counts
/// them once: pytest (its suite is named `pytest`), as pytest-rerunfailures writes them,
/// or a suite whose own `tests` count is smaller than the cases it lists. Then it is
/// one test, the last attempt's outcome, flaky when that passed. Anywhere else two
/// cases with the same name are two tests (jest's and vitest's same-titled tests).
struct Cases<'s, 'l> {
    sink: &'s mut Collector<'l>,
    pending: Option<Case>,
    /// The open suites, innermost last.
    suites: Vec<SuiteCount>,
}

/// The most cases of one Go package's suite held to find its reruns (past it, each
/// case is delivered as it comes).
const MAX_GO_HELD: usize = 200_000;

/// A Go package's cases, each test once in the order it first ran: a name listed again
/// after it failed is a rerun (attempts), its outcome the last run's — flaky when the
/// last passed, failed when it failed too; listed again after a pass (`-count=2`), it
/// is a run of its own.
fn go_attempts(cases: Vec<Case>) -> Vec<Case> {
    let mut out: Vec<Case> = Vec::with_capacity(cases.len());
    let mut at: HashMap<(String, String), usize> = HashMap::with_capacity(cases.len());
    for mut case in cases {
        let key = (case.suite.clone(), case.name.clone());
        // A rerun follows a failure: a name listed again after it passed (`-count=2`)
        // is another run of its own.
        match at.get(&key).filter(|&&i| out[i].failed || out[i].errored) {
            Some(&i) => {
                let earlier = std::mem::take(&mut out[i]);
                case.attempts = earlier.attempts + 1;
                case.flaky = true;
                if case.message.is_empty() {
                    // What the failed run said is why it is flaky.
                    case.message = earlier.message;
                    case.failure = earlier.failure;
                }
                out[i] = case;
            }
            None => {
                at.insert(key, out.len());
                out.push(case);
            }
        }
    }
    out
}

/// The most skipped tests a suite may count without listing them (libtest's ignored
/// tests); a count beyond it is no runner's.
const MAX_UNLISTED: u64 = 10_000_000;

/// What an open suite says of its reruns.
#[derive(Debug, Default)]
struct SuiteCount {
    /// Its runner writes a retry as the same case again (pytest).
    reruns_repeat: bool,
    /// A Go package's suite (its `go.version` property: gotestsum, go-junit-report):
    /// Go names each test of a package once, so a name listed again is the runner's
    /// rerun of it (`--rerun-fails`), wherever it comes. Its cases are held here
    /// until it closes, then each test is delivered once with its attempts.
    go: Option<Vec<Case>>,
    /// Its own `tests` count.
    declared: Option<u64>,
    /// Its own `skipped` count.
    declared_skipped: Option<u64>,
    /// The cases it (and the suites inside it) listed so far.
    cases: u64,
    /// How many of them were skipped.
    skipped: u64,
    /// Its own `failures` + `errors` counts, when it gives them.
    declared_failed: Option<u64>,
    /// The listed cases (its inner suites' too) that failed or errored.
    failed: u64,
    /// The earlier failed runs its cases carry (Surefire counts each in `failures`).
    reruns_failed: u64,
    /// Its name, for what its counts say.
    name: String,
    /// It, or a suite inside it, failed on its own (a `<failure>` of the suite, or
    /// failures its counts declare): its counts have been complained of.
    complained: bool,
    /// A suite inside it (or it) that counts more tests than it shows, not yet
    /// explained by the counts of a suite around it: what to say of it.
    short: Option<String>,
}

impl Cases<'_, '_> {
    /// A suite opens, named `name`, saying it holds `declared` tests of which
    /// `declared_skipped` were skipped.
    fn enter(
        &mut self,
        name: &str,
        declared: Option<u64>,
        declared_skipped: Option<u64>,
        declared_failed: Option<u64>,
    ) {
        let outer = self.suites.last().is_some_and(|s| s.reruns_repeat);
        self.suites.push(SuiteCount {
            reruns_repeat: outer || name == "pytest" || name == "pytest tests",
            go: None,
            declared,
            declared_skipped,
            cases: 0,
            skipped: 0,
            declared_failed,
            failed: 0,
            reruns_failed: 0,
            name: name.to_owned(),
            complained: false,
            short: None,
        });
    }

    /// A failure or error of the suite itself (a `<failure>` or `<error>` outside any
    /// case: a set-up that failed), or one its counts declare and its cases do not
    /// show: a failed test of the suite, never passed over.
    fn suite_failure(&mut self, suite: &str, message: String) {
        self.flush();
        deliver(
            Case {
                suite: suite.to_owned(),
                name: "(the suite itself)".to_owned(),
                errored: true,
                outside: true,
                message,
                attempts: 1,
                ..Case::default()
            },
            self.sink,
        );
    }

    /// A suite closes. Skipped tests it counts but does not list (libtest's JUnit counts
    /// its ignored tests in `tests` and `skipped` and lists only those that ran) are
    /// counted as skipped: exactly the difference, and only when its `tests` count
    /// accounts for them.
    fn leave(&mut self) {
        // A pending case is the suite's: counted before its counts are compared.
        self.flush();
        let Some(mut suite) = self.suites.pop() else {
            return;
        };
        if let Some(cases) = suite.go.take() {
            for case in go_attempts(cases) {
                deliver(case, self.sink);
            }
        }
        // Failures its own counts declare and its cases do not show (a report cut, a
        // writer that counts what it does not list) are not passed over.
        let mut complained = suite.complained;
        if let Some(declared) = suite.declared_failed
            && declared > suite.failed.saturating_add(suite.reruns_failed)
        {
            complained = true;
            self.suite_failure(
                &suite.name,
                format!(
                    "the suite `{}` counts {declared} failed or errored tests, its cases show {}",
                    suite.name, suite.failed
                ),
            );
        }
        let unlisted = match (suite.declared, suite.declared_skipped) {
            (Some(tests), Some(skipped))
                if skipped > suite.skipped
                    && skipped - suite.skipped <= MAX_UNLISTED
                    && suite.cases.checked_add(skipped - suite.skipped) == Some(tests) =>
            {
                skipped - suite.skipped
            }
            _ => 0,
        };
        // Tests its count declares that it neither lists nor counts as skipped. A
        // suite around it may account for them (mocha-junit-reporter counts a pending
        // test in its suite's `tests` and only in the root's `skipped`); else, at the
        // outermost suite, they are said (a count that lies, a report cut short).
        // Surefire counts each rerun as a test of its own.
        let shown = suite.cases.saturating_add(unlisted);
        let with_reruns = shown.saturating_add(suite.reruns_failed);
        let short = match suite.declared {
            Some(declared) if declared > with_reruns => Some(format!(
                "the suite `{}` counts {declared} tests, its cases show {shown}",
                suite.name
            )),
            Some(declared) if declared == shown || declared == with_reruns => None,
            _ => suite.short,
        };
        match self.suites.last_mut() {
            Some(outer) => {
                outer.complained |= complained;
                outer.short = outer.short.take().or(short);
            }
            None => {
                if let Some(message) = short.filter(|_| !complained) {
                    self.suite_failure(&suite.name, message);
                }
            }
        }
        self.sink.unlisted_skipped(unlisted);
        // The suite around it counts them as listed: never counted twice.
        if let Some(outer) = self.suites.last_mut() {
            let failed = suite.failed.max(suite.declared_failed.unwrap_or(0));
            outer.cases = outer
                .cases
                .saturating_add(suite.cases.saturating_add(unlisted));
            outer.skipped = outer
                .skipped
                .saturating_add(suite.skipped.saturating_add(unlisted));
            outer.failed = outer.failed.saturating_add(failed);
            outer.reruns_failed = outer.reruns_failed.saturating_add(suite.reruns_failed);
        }
    }

    /// Whether the open suite holds one case, read and not yet delivered, with no
    /// output of its own: what the suite prints next is that test's.
    fn sole_case_pending(&self) -> bool {
        self.suites
            .last()
            .is_some_and(|s| s.cases == 1 && s.go.is_none())
            && self
                .pending
                .as_ref()
                .is_some_and(|c| c.out.is_empty() && c.err.is_empty())
    }

    /// Whether a repeated case here is a rerun of the one before.
    fn reruns_here(&self) -> bool {
        self.suites
            .last()
            .is_some_and(|s| s.reruns_repeat || s.declared.is_some_and(|d| s.cases > d))
    }

    fn finish(&mut self, mut case: Case, suites: &[String]) {
        // A test is where the runner put it: a case that names no class, or only
        // `test` (Node's test runner writes `classname="test"` on every case and keeps
        // the `describe()` path in the suites around it), is in the whole path of its
        // suites — `math › nested › adds` and `strings › adds` are two tests.
        if case.suite.is_empty() || (case.suite == NODE_CLASSNAME && !suites.is_empty()) {
            case.suite = suites.join(SUITE_PATH);
        } else if let Some(innermost) = suites.last().filter(|s| !s.is_empty()) {
            mocha_title(&mut case, innermost);
        }
        if let Some(suite) = self.suites.last_mut() {
            suite.cases += 1;
            let outcome = case.outcome();
            suite.skipped += u64::from(outcome == TestOutcome::Skipped);
            suite.failed += u64::from(matches!(outcome, TestOutcome::Failed | TestOutcome::Error));
            suite.reruns_failed += case.reruns_failed;
        }
        case.attempts = 1;
        if self
            .suites
            .last()
            .and_then(|s| s.go.as_ref())
            .is_some_and(|held| held.len() < MAX_GO_HELD)
        {
            self.flush();
            if let Some(held) = self.suites.last_mut().and_then(|s| s.go.as_mut()) {
                held.push(case);
            }
            return;
        }
        if let Some(previous) = self.pending.take() {
            // pytest-rerunfailures writes its earlier attempts as bare cases: an earlier
            // one that says it failed (or was skipped) is a run of its own (pytest-xdist's
            // `--dist each` runs a test once per worker), never hidden by a later pass.
            let bare = !(previous.failed || previous.errored || previous.skipped);
            if bare
                && previous.suite == case.suite
                && previous.name == case.name
                && self.reruns_here()
            {
                case.attempts = previous.attempts + 1;
            } else {
                deliver(previous, self.sink);
            }
        }
        self.pending = Some(case);
    }

    fn flush(&mut self) {
        if let Some(case) = self.pending.take() {
            deliver(case, self.sink);
        }
    }
}

/// Reads a JUnit XML report into `sink`.
pub(super) fn read(source: impl BufRead, sink: &mut Collector<'_>) -> Result<(), ReadError> {
    let mut cases = Cases {
        sink,
        pending: None,
        suites: Vec::new(),
    };
    read_into(source, &mut cases)?;
    cases.flush();
    Ok(())
}

fn read_into(source: impl BufRead, sink: &mut Cases<'_, '_>) -> Result<(), ReadError> {
    let mut reader = Reader::from_reader(source);
    reader.config_mut().trim_text(false);
    let mut buf = Vec::with_capacity(8 * 1024);
    // The names of the open suites, innermost last.
    let mut suites: Vec<String> = Vec::new();
    let mut case: Option<Case> = None;
    let mut into = Target::Nowhere;
    // Inside an element of a case that carries no outcome of its own (a flaky
    // failure's stack trace, properties): how deep.
    let mut depth = 0usize;
    let mut root_seen = false;
    loop {
        let at = reader.buffer_position();
        let event = reader.read_event_into(&mut buf).map_err(|e| {
            ReadError::at_offset(format!("malformed XML: {e}"), reader.error_position())
        })?;
        match event {
            Event::DocType(_) => {
                return Err(ReadError::at_offset(
                    "a DOCTYPE is refused: a test report declares no entities",
                    at,
                ));
            }
            Event::Start(e) => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(ReadError::at_offset(
                        format!("elements nested deeper than {MAX_DEPTH}"),
                        at,
                    ));
                }
                root(&e, &mut root_seen, at)?;
                into = open(&e, false, &mut suites, &mut case, sink, at)?;
            }
            Event::Empty(e) => {
                root(&e, &mut root_seen, at)?;
                open(&e, true, &mut suites, &mut case, sink, at)?;
            }
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                match e.local_name().as_ref() {
                    b"testsuite" | b"testsuites" => {
                        if e.local_name().as_ref() == b"testsuite" {
                            suites.pop();
                        }
                        sink.leave();
                    }
                    b"testcase" => {
                        if let Some(done) = case.take() {
                            sink.finish(done, &suites);
                        }
                    }
                    _ => {}
                }
                into = Target::Nowhere;
            }
            Event::Text(t) if into != Target::Nowhere => {
                let text = t
                    .xml10_content()
                    .map_err(|e| ReadError::at_offset(format!("{e}"), at))?;
                append(&mut case, sink, into, &text);
            }
            Event::CData(t) if into != Target::Nowhere => {
                let text = t
                    .decode()
                    .map_err(|e| ReadError::at_offset(format!("{e}"), at))?;
                append(&mut case, sink, into, &text);
            }
            Event::GeneralRef(r) => {
                let text = if let Some(c) = r
                    .resolve_char_ref()
                    .map_err(|e| ReadError::at_offset(format!("{e}"), at))?
                {
                    c.to_string()
                } else {
                    let name = r
                        .decode()
                        .map_err(|e| ReadError::at_offset(format!("{e}"), at))?;
                    quick_xml::escape::resolve_predefined_entity(&name)
                        .ok_or_else(|| {
                            ReadError::at_offset(format!("unknown entity `&{name};`"), at)
                        })?
                        .to_owned()
                };
                if into != Target::Nowhere {
                    append(&mut case, sink, into, &text);
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if !root_seen {
        return Err(ReadError::new("no <testsuites> or <testsuite> element"));
    }
    if depth > 0 || case.is_some() {
        return Err(ReadError::new(
            "the report ends inside an element (cut short while being written?)",
        ));
    }
    Ok(())
}

/// The first element must be a suite (or suites).
fn root(e: &BytesStart<'_>, seen: &mut bool, at: u64) -> Result<(), ReadError> {
    if *seen {
        return Ok(());
    }
    *seen = true;
    match e.local_name().as_ref() {
        b"testsuites" | b"testsuite" => Ok(()),
        other => Err(ReadError::at_offset(
            format!(
                "not a JUnit report: the root element is <{}>",
                String::from_utf8_lossy(other)
            ),
            at,
        )),
    }
}

/// A suite's count: a whole number, a number written with a fraction (`1.0`) rounded
/// up, one too large to hold as the largest; anything else is no count.
fn parse_count(text: &str) -> Option<u64> {
    let text = text.trim();
    if let Ok(n) = text.parse::<u64>() {
        return Some(n);
    }
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return Some(u64::MAX);
    }
    text.parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n >= 0.0)
        .map(|n| n.ceil().min(u64::MAX as f64) as u64)
}

/// An element opens (or, `empty`, opens and closes): where its text goes.
fn open(
    e: &BytesStart<'_>,
    empty: bool,
    suites: &mut Vec<String>,
    case: &mut Option<Case>,
    sink: &mut Cases<'_, '_>,
    at: u64,
) -> Result<Target, ReadError> {
    let name = e.local_name();
    match name.as_ref() {
        b"testsuite" | b"testsuites" => {
            let suite = attribute(e, b"name", at)?.unwrap_or_default();
            let count = |key: &[u8]| -> Result<Option<u64>, ReadError> {
                Ok(attribute(e, key, at)?.and_then(|n| parse_count(&n)))
            };
            let failed = match (count(b"failures")?, count(b"errors")?) {
                (None, None) => None,
                (f, e) => Some(f.unwrap_or(0).saturating_add(e.unwrap_or(0))),
            };
            sink.enter(&suite, count(b"tests")?, count(b"skipped")?, failed);
            if empty {
                // No cases, but its counts still say what it holds (`tests="5"
                // failures="5"/>` is five failures, not nothing).
                sink.leave();
            } else if name.as_ref() == b"testsuite" {
                // Bounded: every case inside takes the path of these names.
                suites.push(crate::untrusted::cut(&suite, 4 * super::MAX_NAME_CHARS));
            }
            Ok(Target::Nowhere)
        }
        b"testcase" => {
            let mut new = Case::default();
            let mut class = None;
            // One pass over the attributes: a report has a hundred thousand cases.
            for attr in e.attributes().with_checks(false) {
                let attr = attr.map_err(|err| {
                    ReadError::at_offset(format!("malformed attribute: {err}"), at)
                })?;
                let key = attr.key.local_name();
                let key = key.as_ref();
                if !matches!(
                    key,
                    b"name"
                        | b"classname"
                        | b"class"
                        | b"file"
                        | b"line"
                        | b"time"
                        | b"status"
                        | b"result"
                ) {
                    continue;
                }
                let value = value_of(&attr, key, at)?;
                match key {
                    b"name" => new.name = value.into_owned(),
                    b"classname" => new.suite = value.into_owned(),
                    b"class" => class = Some(value.into_owned()),
                    b"file" => new.file = Some(value.into_owned()),
                    b"line" => new.line = value.trim().parse().ok(),
                    // GoogleTest: a disabled test is `status="notrun"`, a skipped one
                    // `result="skipped"` (older versions write no <skipped> for it);
                    // other writers say it in the same attributes.
                    b"status" | b"result" => match value.trim().to_ascii_lowercase().as_str() {
                        "notrun" | "skipped" | "suppressed" | "disabled" | "ignored" => {
                            new.skipped = true;
                        }
                        "failed" | "failure" | "fail" => new.failed = true,
                        "error" | "errored" | "broken" => new.errored = true,
                        _ => {}
                    },
                    _ => new.duration_ms = seconds_to_ms(&value),
                }
            }
            if new.suite.is_empty()
                && let Some(class) = class
            {
                new.suite = class;
            }
            if let Some(unfinished) = case.take() {
                // A case inside a case is not JUnit; the outer one is kept as read.
                sink.finish(unfinished, suites);
            }
            if empty {
                sink.finish(std::mem::take(&mut new), suites);
            } else {
                *case = Some(new);
            }
            Ok(Target::Nowhere)
        }
        b"property" => {
            // A Go package's suite names the Go it ran under.
            if attribute(e, b"name", at)?.as_deref() == Some("go.version")
                && case.is_none()
                && let Some(suite) = sink.suites.last_mut()
                && suite.go.is_none()
            {
                suite.go = Some(Vec::new());
            }
            Ok(Target::Nowhere)
        }
        kind @ (b"failure" | b"error" | b"skipped" | b"warning") => {
            let Some(case) = case.as_mut() else {
                // Outside a case: the suite's own failure (a set-up that failed).
                if kind != b"skipped" && kind != b"warning" {
                    let suite = suites.last().cloned().unwrap_or_default();
                    let message = attribute(e, b"message", at)?.unwrap_or_else(|| {
                        format!("a <{}> of the suite itself", String::from_utf8_lossy(kind))
                    });
                    sink.suite_failure(&suite, message);
                    if let Some(open) = sink.suites.last_mut() {
                        open.failed += 1;
                        open.complained = true;
                    }
                }
                return Ok(Target::Nowhere);
            };
            let message = if kind == b"skipped" {
                attribute(e, b"message", at)?
            } else {
                None
            };
            match kind {
                b"failure" => case.failed = true,
                // PHPUnit 9's warnings make its run unsuccessful (and "No tests found" is
                // a warning case of its own).
                b"error" | b"warning" => case.errored = true,
                // Catch2 marks every `[!mayfail]` test so: whether it failed is its
                // `<failure>`'s to say.
                _ if message.as_deref() == Some(CATCH2_MAY_FAIL) => {
                    case.may_fail = true;
                    return Ok(Target::Nowhere);
                }
                _ => case.skipped = true,
            }
            if let Some(message) = message.filter(|_| case.message.is_empty()) {
                case.message = message;
            } else if case.message.is_empty()
                && let Some(message) = attribute(e, b"message", at)?
            {
                case.message = message;
            }
            Ok(if kind == b"skipped" {
                Target::Nowhere
            } else {
                Target::Failure
            })
        }
        b"rerunFailure" | b"rerunError" => {
            if let Some(case) = case.as_mut() {
                case.reruns_failed += 1;
                case.failed_again = true;
                if case.message.is_empty()
                    && let Some(message) = attribute(e, b"message", at)?
                {
                    case.message = message;
                }
            }
            Ok(Target::Nowhere)
        }
        b"flakyFailure" | b"flakyError" => {
            if let Some(case) = case.as_mut() {
                case.flaky = true;
                case.reruns_failed += 1;
                if case.message.is_empty()
                    && let Some(message) = attribute(e, b"message", at)?
                {
                    case.message = message;
                }
            }
            Ok(Target::Nowhere)
        }
        b"system-out" if case.is_some() => Ok(Target::Out),
        b"system-err" if case.is_some() => Ok(Target::Err),
        kind @ (b"system-out" | b"system-err") if sink.sole_case_pending() => {
            Ok(if kind == b"system-out" {
                Target::SuiteOut
            } else {
                Target::SuiteErr
            })
        }
        _ => Ok(Target::Nowhere),
    }
}

/// An attribute's value, unescaped; an unknown entity in it is an error.
fn attribute(e: &BytesStart<'_>, key: &[u8], at: u64) -> Result<Option<String>, ReadError> {
    for attr in e.attributes().with_checks(false) {
        let attr =
            attr.map_err(|err| ReadError::at_offset(format!("malformed attribute: {err}"), at))?;
        if attr.key.local_name().as_ref() == key {
            return Ok(Some(value_of(&attr, key, at)?.into_owned()));
        }
    }
    Ok(None)
}

/// An attribute's value as XML reads it (entities resolved, line breaks as spaces); an
/// unknown entity is an error naming the attribute.
fn value_of<'a>(
    attr: &quick_xml::events::attributes::Attribute<'a>,
    key: &[u8],
    at: u64,
) -> Result<std::borrow::Cow<'a, str>, ReadError> {
    attr.normalized_value(quick_xml::XmlVersion::Implicit1_0)
        .map_err(|err| {
            ReadError::at_offset(
                format!("attribute `{}`: {err}", String::from_utf8_lossy(key)),
                at,
            )
        })
}

fn append(case: &mut Option<Case>, sink: &mut Cases<'_, '_>, into: Target, text: &str) {
    let case = match into {
        Target::SuiteOut | Target::SuiteErr => sink.pending.as_mut(),
        _ => case.as_mut(),
    };
    let Some(case) = case else { return };
    match into {
        Target::Failure => capture(&mut case.failure, text),
        Target::Out | Target::SuiteOut => capture(&mut case.out, text),
        Target::Err | Target::SuiteErr => capture(&mut case.err, text),
        Target::Nowhere => {}
    }
}

/// A finished test goes to the sink with its outcome and what it printed.
fn deliver(case: Case, sink: &mut Collector<'_>) {
    let outcome = case.outcome();
    // What a failure printed: its own text, else what the test wrote (nextest keeps the
    // panic in system-err; some runners only in system-out).
    let output = [&case.failure, &case.err, &case.out]
        .into_iter()
        .find(|t| !t.trim().is_empty())
        .map_or("", |t| t.as_str());
    sink.add(Found {
        suite: &case.suite,
        name: &case.name,
        outcome: Some(outcome),
        duration_ms: case.duration_ms,
        message: &case.message,
        output,
        file: case.file.as_deref(),
        line: case.line,
        package: None,
        outside: case.outside,
    });
}
