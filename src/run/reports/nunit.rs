//! NUnit's own results: NUnit 3's `TestResult.xml` (a `<test-run>` of nested
//! `<test-suite>`s — assembly, namespaces, fixtures, parameterized methods — with
//! `<test-case result label>`) and NUnit 2's (`<test-results>`, the same nesting
//! inside `<results>`, `<test-case result>` or, before 2.5, `executed`/`success`).
//!
//! A test's suite is its fixture's full name as NUnit 3 writes it (`fullname`: the
//! namespace, an outer class after `+`, a parameterized fixture's arguments), so the
//! whole path below the assembly is its identity; a suite written without one gives
//! the names of the suites below the assembly joined with ` › `. NUnit 2 names each
//! case by its full name (`Ns.Class.Method(1)`): the suite is all before the method.

use std::io::BufRead;

use quick_xml::events::BytesStart;

use super::xml::{self, Handler, attributes, count, kept, seconds, without_suite};
use super::{Collector, Found, ReadError, capture};
use crate::results::TestOutcome;

/// Suites that group a method's cases, not a class's: their cases' suite is the
/// fixture around them.
const METHOD_SUITES: &[&str] = &[
    "ParameterizedMethod",
    "Theory",
    "GenericMethod",
    "ParameterizedTest",
];

/// Suites above the classes: an assembly (named by its path), a project of assemblies.
const OUTER_SUITES: &[&str] = &["Assembly", "Project"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Elem {
    Root,
    Suite,
    Case,
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
    Output,
    Reason,
}

/// A `<test-suite>` being read.
#[derive(Debug, Default)]
struct Suite {
    kind: String,
    name: String,
    fullname: Option<String>,
    /// Its result says it failed.
    failed: bool,
    result: String,
    message: String,
    /// A failure below it was listed (a case's, an inner suite's own).
    failure_below: bool,
}

/// A `<test-case>` being read.
#[derive(Debug, Default)]
struct Case {
    name: String,
    result: Option<String>,
    label: Option<String>,
    executed: Option<String>,
    success: Option<String>,
    duration_ms: Option<u64>,
    message: String,
    stack: String,
    output: String,
    reason: String,
    /// It holds a `<failure>`: it did not pass, whatever its `result` says.
    failure: bool,
}

struct Nunit<'s, 'l> {
    sink: &'s mut Collector<'l>,
    /// NUnit 2's `<test-results>` (names are full names), not NUnit 3's `<test-run>`.
    v2: bool,
    path: Vec<Elem>,
    suites: Vec<Suite>,
    case: Option<Case>,
    into: Target,
    /// Whose text: the case's (else the innermost suite's).
    into_case: bool,
    /// The run's own result and counts.
    run_result: Option<String>,
    declared_total: Option<u64>,
    declared_failed: Option<u64>,
    listed: u64,
    listed_failed: u64,
    failures: u64,
}

/// Reads an NUnit 2 or 3 report into `sink`.
pub(super) fn read(source: impl BufRead, sink: &mut Collector<'_>) -> Result<(), ReadError> {
    let mut nunit = Nunit {
        sink,
        v2: false,
        path: Vec::new(),
        suites: Vec::new(),
        case: None,
        into: Target::Nowhere,
        into_case: false,
        run_result: None,
        declared_total: None,
        declared_failed: None,
        listed: 0,
        listed_failed: 0,
        failures: 0,
    };
    xml::read(source, &["test-run", "test-results"], "NUnit", &mut nunit)?;
    nunit.finish();
    Ok(())
}

impl Handler for Nunit<'_, '_> {
    fn open(&mut self, e: &BytesStart<'_>, at: u64) -> Result<(), ReadError> {
        let parent = self.path.last().copied();
        let name = e.local_name();
        let elem = match (parent, name.as_ref()) {
            (None, root) => {
                self.v2 = root == b"test-results";
                let [total, failed, failures, errors, result] = attributes(
                    e,
                    [b"total", b"failed", b"failures", b"errors", b"result"],
                    at,
                )?;
                self.declared_total = count(total.as_deref());
                self.declared_failed = if self.v2 {
                    match (count(failures.as_deref()), count(errors.as_deref())) {
                        (None, None) => None,
                        (f, e) => Some(f.unwrap_or(0).saturating_add(e.unwrap_or(0))),
                    }
                } else {
                    count(failed.as_deref())
                };
                self.run_result = result.map(kept);
                Elem::Root
            }
            (_, b"test-suite") => {
                let [kind, name, fullname, result, success] = attributes(
                    e,
                    [b"type", b"name", b"fullname", b"result", b"success"],
                    at,
                )?;
                let result = result.map(kept).unwrap_or_default();
                let failed = if result.is_empty() {
                    success
                        .as_deref()
                        .is_some_and(|s| s.trim().eq_ignore_ascii_case("false"))
                } else {
                    suite_failed(&result)
                };
                self.suites.push(Suite {
                    kind: kind.unwrap_or_default(),
                    name: kept(name.unwrap_or_default()),
                    fullname: fullname.map(kept).filter(|f| !f.trim().is_empty()),
                    failed,
                    result,
                    ..Suite::default()
                });
                Elem::Suite
            }
            (_, b"test-case") => {
                let keys: [&[u8]; 7] = [
                    b"name",
                    b"result",
                    b"label",
                    b"executed",
                    b"success",
                    b"duration",
                    b"time",
                ];
                let [name, result, label, executed, success, duration, time] =
                    attributes(e, keys, at)?;
                if let Some(unfinished) = self.case.take() {
                    // A case inside a case is not NUnit's; the outer one is kept as read.
                    self.case_ends(unfinished);
                }
                self.case = Some(Case {
                    name: kept(name.unwrap_or_default()),
                    result: result.map(kept),
                    label,
                    executed,
                    success,
                    duration_ms: duration.or(time).as_deref().and_then(seconds),
                    ..Case::default()
                });
                Elem::Case
            }
            (Some(Elem::Case | Elem::Suite), b"failure") => {
                if self.path.last() == Some(&Elem::Case)
                    && let Some(case) = self.case.as_mut()
                {
                    case.failure = true;
                }
                Elem::Failure
            }
            (Some(Elem::Case | Elem::Suite), b"reason") => Elem::Reason,
            (Some(Elem::Case), b"output") => self.keep(Target::Output, true),
            (Some(owner @ (Elem::Failure | Elem::Reason)), b"message") => {
                let into_case = self.path.iter().rev().nth(1) == Some(&Elem::Case);
                let into = if owner == Elem::Failure {
                    Target::Message
                } else {
                    Target::Reason
                };
                self.keep(into, into_case)
            }
            (Some(Elem::Failure), b"stack-trace") => {
                let into_case = self.path.iter().rev().nth(1) == Some(&Elem::Case);
                self.keep(Target::Stack, into_case)
            }
            _ => Elem::Other,
        };
        self.path.push(elem);
        Ok(())
    }

    fn close(&mut self, _name: &[u8]) -> Result<(), ReadError> {
        match self.path.pop() {
            Some(Elem::Case) => {
                if let Some(case) = self.case.take() {
                    self.case_ends(case);
                }
            }
            Some(Elem::Suite) => self.suite_ends(),
            Some(Elem::Kept) => self.into = Target::Nowhere,
            _ => {}
        }
        Ok(())
    }

    fn wants_text(&self) -> bool {
        self.into != Target::Nowhere
    }

    fn text(&mut self, text: &str) {
        if self.into_case {
            let Some(case) = self.case.as_mut() else {
                return;
            };
            match self.into {
                Target::Message => capture(&mut case.message, text),
                Target::Stack => capture(&mut case.stack, text),
                Target::Output => capture(&mut case.output, text),
                Target::Reason => capture(&mut case.reason, text),
                Target::Nowhere => {}
            }
        } else if let Some(suite) = self.suites.last_mut()
            && matches!(self.into, Target::Message | Target::Reason)
        {
            capture(&mut suite.message, text);
        }
    }
}

impl Nunit<'_, '_> {
    fn keep(&mut self, into: Target, into_case: bool) -> Elem {
        self.into = into;
        self.into_case = into_case;
        Elem::Kept
    }

    /// The suite of a case read now: the innermost fixture's full name, else the
    /// suites' names below the assembly joined with ` › `.
    fn suite_here(&self) -> String {
        let classes: Vec<&Suite> = self
            .suites
            .iter()
            .filter(|s| {
                let kind = s.kind.as_str();
                !METHOD_SUITES.contains(&kind) && !OUTER_SUITES.contains(&kind)
            })
            .collect();
        if let Some(fullname) = classes.last().and_then(|s| s.fullname.as_deref()) {
            return fullname.to_owned();
        }
        let names: Vec<&str> = classes.iter().map(|s| s.name.as_str()).collect();
        names.join(" › ")
    }

    fn case_ends(&mut self, case: Case) {
        let (outcome, why) = match case_outcome(&case) {
            (TestOutcome::Passed, _) if case.failure => (
                TestOutcome::Failed,
                Some(format!(
                    "the result says `{}`, but the case holds a <failure>",
                    case.result.as_deref().unwrap_or("success").trim()
                )),
            ),
            read => read,
        };
        self.listed += 1;
        self.listed_failed += u64::from(outcome.is_failure());
        // NUnit 2 names a case by its full name: the class is all before the method.
        let (suite, name) = if self.v2 {
            let (class, method) = split_full_name(&case.name);
            (class.to_owned(), method.to_owned())
        } else {
            let suite = self.suite_here();
            let name = without_suite(&case.name, &suite).to_owned();
            (suite, name)
        };
        let message = [&case.message, &case.reason]
            .into_iter()
            .find(|t| !t.trim().is_empty())
            .map_or(why.as_deref().unwrap_or_default(), |t| t.as_str());
        let output = [&case.stack, &case.output]
            .into_iter()
            .find(|t| !t.trim().is_empty())
            .map_or("", |t| t.as_str());
        self.sink.add(Found {
            suite: &suite,
            name: &name,
            outcome: Some(outcome),
            duration_ms: case.duration_ms,
            message,
            output,
            ..Found::default()
        });
        if outcome.is_failure() {
            self.failures += 1;
            for suite in &mut self.suites {
                suite.failure_below = true;
            }
        }
    }

    /// A suite ends. One whose result says it failed with no failure listed below it
    /// (a one-time set-up or tear-down that failed, a fixture that could not run, an
    /// assembly that did not load) is a failed test of its own.
    fn suite_ends(&mut self) {
        let Some(suite) = self.suites.pop() else {
            return;
        };
        if suite.failed && !suite.failure_below {
            let shown = if OUTER_SUITES.contains(&suite.kind.as_str()) {
                suite.name.clone()
            } else {
                suite.fullname.clone().unwrap_or_else(|| suite.name.clone())
            };
            let message = if suite.message.trim().is_empty() {
                format!("the suite's result is `{}`", suite.result.trim())
            } else {
                suite.message.clone()
            };
            self.own_failure(&shown, "(the suite itself)", &message);
        }
        if suite.failed || suite.failure_below {
            for outer in &mut self.suites {
                outer.failure_below = true;
            }
        }
    }

    /// After the whole file: the run's counts held against its cases, and a run whose
    /// result failed with nothing listed failing.
    fn finish(&mut self) {
        let mut why = Vec::new();
        if let Some(n) = self.declared_failed.filter(|n| *n > self.listed_failed) {
            why.push(format!("{n} failed, its cases show {}", self.listed_failed));
        }
        if let Some(n) = self.declared_total.filter(|n| *n > self.listed) {
            why.push(format!("{n} tests, it lists {}", self.listed));
        }
        if !why.is_empty() {
            let message = format!("the run counts {}", why.join("; "));
            self.own_failure("", "(the report's summary)", &message);
        }
        if self.failures == 0
            && let Some(result) = self.run_result.as_deref().filter(|r| suite_failed(r))
        {
            let message = format!(
                "the run's result is `{}`, its cases show no failure",
                result.trim()
            );
            self.own_failure("", "(the run itself)", &message);
        }
    }

    fn own_failure(&mut self, suite: &str, name: &str, message: &str) {
        self.failures += 1;
        self.sink.add(Found {
            suite,
            name,
            outcome: Some(TestOutcome::Error),
            message,
            outside: true,
            ..Found::default()
        });
    }
}

/// Whether a suite's or run's result says it failed.
fn suite_failed(result: &str) -> bool {
    ["Failed", "Failure", "Error", "Cancelled", "NotRunnable"]
        .iter()
        .any(|w| result.trim().eq_ignore_ascii_case(w))
}

/// A case's outcome, and why when it is not a plain pass, failure or skip. NUnit 3:
/// `Passed`; `Failed` (an error when its label says `Error`, `Invalid` or
/// `Cancelled`); `Skipped` (`Ignored`, `Explicit`) and `Inconclusive` did not run to a
/// verdict; `Warning` is not a pass. NUnit 2: `Success`, `Failure`, `Error`,
/// `NotRunnable`, `Cancelled`, `Ignored`, `Skipped`, `Inconclusive`, or before 2.5
/// only `executed` and `success`. Any other word is an error.
fn case_outcome(case: &Case) -> (TestOutcome, Option<String>) {
    let is_true = |v: &Option<String>, want: &str| {
        v.as_deref()
            .is_some_and(|v| v.trim().eq_ignore_ascii_case(want))
    };
    let Some(result) = case.result.as_deref().map(str::trim) else {
        return if is_true(&case.executed, "false") {
            (TestOutcome::Skipped, None)
        } else if is_true(&case.success, "true") {
            (TestOutcome::Passed, None)
        } else if is_true(&case.success, "false") {
            (TestOutcome::Failed, None)
        } else {
            (
                TestOutcome::Error,
                Some("the case gives no result".to_owned()),
            )
        };
    };
    let label = case.label.as_deref().map(str::trim).unwrap_or_default();
    match result.to_ascii_lowercase().as_str() {
        "passed" | "success" => (TestOutcome::Passed, None),
        "failed" | "failure" => {
            if ["Error", "Invalid", "Cancelled"]
                .iter()
                .any(|l| label.eq_ignore_ascii_case(l))
            {
                (TestOutcome::Error, Some(format!("NUnit: failed ({label})")))
            } else {
                // NUnit 3 says some failures only in the label (`Test exceeded Timeout
                // value 1ms.`, beside an empty <failure/>).
                (
                    TestOutcome::Failed,
                    (!label.is_empty()).then(|| label.to_owned()),
                )
            }
        }
        "skipped" | "ignored" | "inconclusive" => (TestOutcome::Skipped, None),
        "error" | "cancelled" => (TestOutcome::Error, None),
        "notrunnable" => (
            TestOutcome::Error,
            Some("the test could not be run (NotRunnable)".to_owned()),
        ),
        "warning" => (
            TestOutcome::Error,
            Some("the result is `Warning`: a warning is not a pass".to_owned()),
        ),
        _ => (
            TestOutcome::Error,
            Some(format!("the result `{result}` is not one NUnit defines")),
        ),
    }
}

/// NUnit 2's full name as (class, method): `Ns.Class.Method(1.5, "a.b")` is `Ns.Class`
/// and `Method(1.5, "a.b")`; the dot that splits them is the last one outside
/// brackets, quotes and the arguments.
fn split_full_name(name: &str) -> (&str, &str) {
    let mut depth = 0i32;
    let mut quoted = false;
    let mut split = None;
    for (i, c) in name.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '(' | '[' | '<' if !quoted => depth += 1,
            ')' | ']' | '>' if !quoted => depth -= 1,
            '.' if !quoted && depth == 0 => split = Some(i),
            _ => {}
        }
    }
    match split {
        Some(i) if i > 0 && i + 1 < name.len() => (&name[..i], &name[i + 1..]),
        _ => ("", name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nunit2_full_names_split_at_the_method() {
        assert_eq!(
            split_full_name("Bank.AccountTest.TestAlwaysFails"),
            ("Bank.AccountTest", "TestAlwaysFails")
        );
        assert_eq!(
            split_full_name("Ns.Class.Method(1.5,\"a.b\")"),
            ("Ns.Class", "Method(1.5,\"a.b\")")
        );
        assert_eq!(
            split_full_name("Ns.Fixture(1).Method"),
            ("Ns.Fixture(1)", "Method")
        );
        assert_eq!(split_full_name("Lonely"), ("", "Lonely"));
        assert_eq!(split_full_name(".x"), ("", ".x"));
    }
}
