//! xUnit.net's own results (`--xml`, `dotnet test -- xunit.xml`…): `<assemblies>` of
//! `<assembly total failed errors>`, each with its `<collection>`s of `<test name type
//! method time result>` (`Pass`, `Fail`, `Skip`, v3's `NotRun`) holding a `<failure>`
//! (`<message>`, `<stack-trace>`), a skip's `<reason>` and the test's `<output>`, and an
//! `<errors>` list of what failed outside the tests (a fixture's or a collection's
//! clean-up, a fatal error). A lone `<assembly>` (xUnit.net 1, some runners) is read too.

use std::io::BufRead;

use quick_xml::events::BytesStart;

use super::xml::{self, Handler, attributes, count, kept, seconds, without_suite};
use super::{Collector, Found, ReadError, capture};
use crate::results::TestOutcome;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Elem {
    Root,
    Assembly,
    /// A `<collection>` (or xUnit.net 1's `<class>`).
    Group,
    Test,
    Errors,
    Error,
    Failure,
    Reason,
    /// An element whose text is kept (where it goes is in `into`).
    Kept,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Nowhere,
    Message,
    Stack,
    Reason,
    Output,
}

/// A test, or an entry of `<errors>`, being read.
#[derive(Debug, Default)]
struct Case {
    name: String,
    class: String,
    result: Option<String>,
    duration_ms: Option<u64>,
    exception: Option<String>,
    message: String,
    stack: String,
    output: String,
    /// It holds a `<failure>`: it did not pass, whatever its `result` says.
    failure: bool,
}

/// An `<assembly>` being read: its counts, and what it listed.
#[derive(Debug, Default)]
struct Assembly {
    /// Its file's name (the attribute is its path).
    name: String,
    total: Option<u64>,
    failed: Option<u64>,
    errors: Option<u64>,
    listed: u64,
    listed_failed: u64,
    listed_errors: u64,
}

struct Xunit<'s, 'l> {
    sink: &'s mut Collector<'l>,
    path: Vec<Elem>,
    assembly: Assembly,
    /// The collection (or class) being read: the suite of a test that names no type.
    group: String,
    case: Option<Case>,
    /// Whether the case is an entry of `<errors>`.
    error: bool,
    into: Target,
}

/// Reads an xUnit.net report into `sink`.
pub(super) fn read(source: impl BufRead, sink: &mut Collector<'_>) -> Result<(), ReadError> {
    let mut xunit = Xunit {
        sink,
        path: Vec::new(),
        assembly: Assembly::default(),
        group: String::new(),
        case: None,
        error: false,
        into: Target::Nowhere,
    };
    xml::read(source, &["assemblies", "assembly"], "xUnit.net", &mut xunit)
}

impl Handler for Xunit<'_, '_> {
    fn open(&mut self, e: &BytesStart<'_>, at: u64) -> Result<(), ReadError> {
        let parent = self.path.last().copied();
        let name = e.local_name();
        let elem = match (parent, name.as_ref()) {
            (None | Some(Elem::Root), b"assembly") => {
                let [name, total, failed, errors] =
                    attributes(e, [b"name", b"total", b"failed", b"errors"], at)?;
                let name = name.unwrap_or_default();
                let file = name.rsplit(['/', '\\']).next().unwrap_or_default();
                self.assembly = Assembly {
                    name: kept(file.to_owned()),
                    total: count(total.as_deref()),
                    failed: count(failed.as_deref()),
                    errors: count(errors.as_deref()),
                    ..Assembly::default()
                };
                Elem::Assembly
            }
            (None, _) => Elem::Root,
            (Some(Elem::Assembly), b"collection" | b"class") => {
                let [name] = attributes(e, [b"name"], at)?;
                self.group = kept(name.unwrap_or_default());
                Elem::Group
            }
            (Some(Elem::Assembly | Elem::Group), b"test") => {
                let [name, class, time, result] =
                    attributes(e, [b"name", b"type", b"time", b"result"], at)?;
                self.case = Some(Case {
                    name: kept(name.unwrap_or_default()),
                    class: kept(class.unwrap_or_default()),
                    result: result.map(kept),
                    duration_ms: time.as_deref().and_then(seconds),
                    ..Case::default()
                });
                self.error = false;
                Elem::Test
            }
            (Some(Elem::Assembly), b"errors") => Elem::Errors,
            (Some(Elem::Errors), b"error") => {
                let [kind, name] = attributes(e, [b"type", b"name"], at)?;
                self.case = Some(Case {
                    name: format!("({})", kind.as_deref().unwrap_or("error").trim()),
                    class: kept(name.unwrap_or_default()),
                    ..Case::default()
                });
                self.error = true;
                Elem::Error
            }
            (Some(Elem::Test | Elem::Error), b"failure") => {
                let [exception] = attributes(e, [b"exception-type"], at)?;
                if let Some(case) = self.case.as_mut() {
                    case.exception = exception.map(kept);
                    case.failure = true;
                }
                Elem::Failure
            }
            (Some(Elem::Failure), b"message") => self.keep(Target::Message),
            (Some(Elem::Failure), b"stack-trace") => self.keep(Target::Stack),
            // xUnit.net 2 writes the reason as the element's text; 1 in a <message>.
            (Some(Elem::Test), b"reason") => {
                self.into = Target::Reason;
                Elem::Reason
            }
            (Some(Elem::Reason), b"message") => self.keep(Target::Reason),
            (Some(Elem::Test), b"output") => self.keep(Target::Output),
            // What says a test ran or failed, somewhere xUnit.net never writes it, would
            // be passed over: refused instead.
            (
                _,
                what @ (b"assembly" | b"collection" | b"test" | b"errors" | b"error" | b"failure"),
            ) => {
                return Err(ReadError::at_offset(
                    format!(
                        "a <{}> where xUnit.net writes none (tests are in an <assembly> or its collections, errors in its <errors>)",
                        String::from_utf8_lossy(what)
                    ),
                    at,
                ));
            }
            _ => Elem::Other,
        };
        self.path.push(elem);
        Ok(())
    }

    fn close(&mut self, _name: &[u8]) -> Result<(), ReadError> {
        match self.path.pop() {
            Some(Elem::Test | Elem::Error) => {
                if let Some(case) = self.case.take() {
                    self.case_ends(case);
                }
            }
            Some(Elem::Assembly) => self.assembly_ends(),
            Some(Elem::Kept | Elem::Reason) => self.into = Target::Nowhere,
            _ => {}
        }
        Ok(())
    }

    fn wants_text(&self) -> bool {
        self.into != Target::Nowhere
    }

    fn text(&mut self, text: &str) {
        let Some(case) = self.case.as_mut() else {
            return;
        };
        match self.into {
            Target::Message => capture(&mut case.message, text),
            Target::Stack => capture(&mut case.stack, text),
            Target::Output => capture(&mut case.output, text),
            // A skip's reason is not kept: a skipped test's message is not shown.
            Target::Reason | Target::Nowhere => {}
        }
    }
}

impl Xunit<'_, '_> {
    fn keep(&mut self, into: Target) -> Elem {
        self.into = into;
        Elem::Kept
    }

    fn case_ends(&mut self, case: Case) {
        let (outcome, why) = if self.error {
            self.assembly.listed_errors += 1;
            (TestOutcome::Error, None)
        } else {
            self.assembly.listed += 1;
            let (outcome, why) = match outcome(case.result.as_deref()) {
                // A `<failure>` under a result that says otherwise: it did not pass.
                (said, _) if case.failure && !said.is_failure() => (
                    TestOutcome::Failed,
                    Some(format!(
                        "the result says `{}`, but the test holds a <failure>",
                        case.result.as_deref().unwrap_or_default().trim()
                    )),
                ),
                read => read,
            };
            self.assembly.listed_failed += u64::from(outcome == TestOutcome::Failed);
            (outcome, why)
        };
        let suite = if case.class.trim().is_empty() {
            if self.error {
                self.assembly.name.as_str()
            } else {
                self.group.as_str()
            }
        } else {
            case.class.as_str()
        };
        let message = if !case.message.trim().is_empty() {
            case.message.as_str()
        } else if let Some(exception) = case.exception.as_deref() {
            exception
        } else {
            why.as_deref().unwrap_or_default()
        };
        let output = [&case.stack, &case.output]
            .into_iter()
            .find(|t| !t.trim().is_empty())
            .map_or("", |t| t.as_str());
        self.sink.add(Found {
            suite,
            name: without_suite(&case.name, suite),
            outcome: Some(outcome),
            duration_ms: case.duration_ms,
            message,
            output,
            outside: self.error,
            ..Found::default()
        });
    }

    /// An assembly ends: counts it declares that its tests and errors do not bear out
    /// (more tests, more failed, more errors than listed) are a failure of the report.
    fn assembly_ends(&mut self) {
        let a = std::mem::take(&mut self.assembly);
        let mut why = Vec::new();
        if let Some(n) = a.failed.filter(|n| *n > a.listed_failed) {
            why.push(format!("{n} failed, its tests show {}", a.listed_failed));
        }
        if let Some(n) = a.errors.filter(|n| *n > a.listed_errors) {
            why.push(format!("{n} errors, it lists {}", a.listed_errors));
        }
        if let Some(n) = a.total.filter(|n| *n > a.listed) {
            why.push(format!("{n} tests, it lists {}", a.listed));
        }
        if why.is_empty() {
            return;
        }
        let message = format!("the assembly counts {}", why.join("; "));
        self.sink.add(Found {
            suite: &a.name,
            name: "(the report's summary)",
            outcome: Some(TestOutcome::Error),
            message: &message,
            outside: true,
            ..Found::default()
        });
    }
}

/// A test's outcome, and why when it is not a plain pass, failure or skip: `Pass`,
/// `Fail`, `Skip` and v3's `NotRun` (an explicit test left out); any other word, or
/// none, is an error.
fn outcome(result: Option<&str>) -> (TestOutcome, Option<String>) {
    let Some(result) = result.map(str::trim) else {
        return (
            TestOutcome::Error,
            Some("the test gives no result".to_owned()),
        );
    };
    match result.to_ascii_lowercase().as_str() {
        "pass" => (TestOutcome::Passed, None),
        "fail" => (TestOutcome::Failed, None),
        "skip" | "notrun" => (TestOutcome::Skipped, None),
        _ => (
            TestOutcome::Error,
            Some(format!(
                "the result `{result}` is not one xUnit.net defines (Pass, Fail, Skip, NotRun)"
            )),
        ),
    }
}
