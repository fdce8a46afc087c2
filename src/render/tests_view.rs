//! What renderers show of a pair's tests from the runner's report: the failing ones
//! first, each with its place in the code (linked to the verified commit when it can
//! be), the flaky ones, and the counts (both sides when the log's differ).

use super::provenance::is_link_safe;
use crate::results::{CheckResult, TestCounts, TestOutcome, TestResult};
use crate::untrusted::cut;

/// How many failing tests a pair lists before "… and N more".
pub const FAILING_LISTED: usize = 10;

/// A pair's failures: failed and errored tests, in report order but for what the
/// reader acts on first — a new failure before one the history knows (known flaky, or
/// failing on the base branch too), and those its quarantine held back last.
pub fn failing(d: &CheckResult) -> impl Iterator<Item = &TestResult> {
    // Three passes in place of a sort: no copy of the list, and the first failure
    // (which most callers take alone) found without ranking the rest.
    let rank = |c: &TestResult| {
        if c.quarantined {
            2
        } else if c.history.as_deref().is_some_and(known) {
            1
        } else {
            0
        }
    };
    let cases = move || {
        d.tests
            .iter()
            .flat_map(|t| t.cases.iter())
            .filter(|c| c.outcome.is_failure())
    };
    (0..3).flat_map(move |r| cases().filter(move |c| rank(c) == r))
}

/// Whether a failure's history note says the base branch knows it (flaky there, or
/// failing there too), as opposed to new.
fn known(note: &str) -> bool {
    note.starts_with("known flaky") || note.starts_with("also failing")
}

/// ` (known flaky: failed 4 of last 20 on main)`: a failure's history note, when
/// `merge` had a history to read it from.
pub fn history_note(case: &TestResult) -> String {
    case.history
        .as_deref()
        .map(|note| format!(" ({})", cut(note, NOTE_BYTES)))
        .unwrap_or_default()
}

/// The most bytes of a history note shown.
const NOTE_BYTES: usize = 300;

/// A pair's quarantine entries, and what each did (empty without one).
pub fn quarantine(d: &CheckResult) -> &[crate::results::QuarantineUse] {
    d.tests.as_ref().map_or(&[], |t| t.quarantine.as_slice())
}

/// How many tests failed (from the counts, which include those left out of the list).
pub fn failing_count(d: &CheckResult) -> u64 {
    d.tests
        .as_ref()
        .and(d.test_counts.as_ref())
        .map_or(0, |c| c.failed)
}

/// The flaky tests of a pair.
pub fn flaky(d: &CheckResult) -> impl Iterator<Item = &TestResult> {
    d.tests
        .iter()
        .flat_map(|t| t.cases.iter())
        .filter(|c| c.outcome == TestOutcome::Flaky)
}

/// A test as people name it: `suite › name`, or the name alone; each part at most as
/// long as a run keeps it (a forged result may carry more).
pub fn test_name(case: &TestResult) -> String {
    let name = cut(&case.name, NAME_BYTES);
    match crate::results::suite_shown(&case.suite, &case.name) {
        "" => name,
        suite => format!("{} › {name}", cut(suite, NAME_BYTES)),
    }
}

/// A failure's output as shown: at most as long as a run keeps it.
pub fn output(case: &TestResult) -> Option<String> {
    case.output.as_deref().map(|text| cut(text, OUTPUT_BYTES))
}

/// The most bytes of a name shown (a run keeps 500 characters).
const NAME_BYTES: usize = 2_000;
/// The most bytes of an output shown (a run keeps 4,000 characters).
const OUTPUT_BYTES: usize = 16_400;

/// `file:line` of a failure, and its link under `blob` (the verified commit's files,
/// `{web}/{repo}/blob/{commit}/` and the manifest's folder) when the path is safe to link.
pub fn place(case: &TestResult, blob: Option<&str>) -> Option<(String, Option<String>)> {
    let file = case.file.as_deref()?;
    let label = match case.line {
        Some(line) => format!("{file}:{line}"),
        None => file.to_owned(),
    };
    let link = blob
        .filter(|_| is_safe_path(file))
        .map(|base| {
            let anchor = case.line.map_or(String::new(), |l| format!("#L{l}"));
            format!("{base}{file}{anchor}")
        })
        .filter(|url| is_link_safe(url));
    Some((label, link))
}

/// A repository path that can be put in a URL (or an annotation) as it is.
pub fn is_safe_path(path: &str) -> bool {
    !path.is_empty()
        && path.len() <= 500
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
        && path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-' | b'+'))
}

/// The most characters of a failure's message shown on its line.
const MESSAGE_CHARS: usize = 300;

/// A failure's message on one line, with the values an assertion printed after its
/// first line (jest's `Expected:`/`Received:`, Rust's `left:`/`right:`), joined by
/// ` · `: what a place already says is left out (a Rust panic's `thread '…' panicked
/// at FILE:LINE:COL:` line, Go's `FILE:LINE: ` before its message). At most
/// 300 characters.
pub fn message_line(case: &TestResult) -> String {
    let Some(message) = case.message.as_deref() else {
        return String::new();
    };
    let file_name = case
        .file
        .as_deref()
        .and_then(|f| f.rsplit('/').next())
        .filter(|f| !f.is_empty());
    // A carriage return alone is a line break too: a message's later line shown after
    // it would read as a line of the output's own.
    let lines: Vec<&str> = message
        .split(['\n', '\r'])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let several = lines.len() > 1;
    let parts: Vec<&str> = lines
        .into_iter()
        .filter(|l| !(several && is_panic_place(l)))
        .map(|l| match file_name {
            // `calc_test.go:12: got 3, want 4` → `got 3, want 4`.
            Some(name) => l
                .strip_prefix(name)
                .and_then(|rest| rest.strip_prefix(':'))
                .and_then(|rest| {
                    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                    (digits > 0).then(|| rest[digits..].trim_start_matches(':').trim_start())
                })
                .filter(|rest| !rest.is_empty())
                .unwrap_or(l),
            None => l,
        })
        .collect();
    cut_chars(&parts.join(" · "), MESSAGE_CHARS)
}

/// `thread 'tests::x' (5950) panicked at src/lib.rs:21:9:`: a place, which the failure's
/// own place shows.
fn is_panic_place(line: &str) -> bool {
    line.starts_with("thread '")
        && line.contains("' ")
        && line.contains(" panicked at ")
        && line.ends_with(':')
}

/// At most `max` characters of `text`, marked `…` when cut.
fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// `118 passed (1 flaky), 2 failed, 1 skipped`.
pub fn describe(counts: &TestCounts) -> String {
    let flaky = if counts.flaky > 0 {
        format!(" ({} flaky)", counts.flaky)
    } else {
        String::new()
    };
    format!(
        "{} passed{flaky}, {} failed, {} skipped",
        counts.passed, counts.failed, counts.skipped
    )
}

/// The counts line of a pair: the winning counts and where they came from, and the
/// log's beside them when a report's won and the log said otherwise.
pub fn counts_line(d: &CheckResult) -> Option<String> {
    let counts = d.test_counts.as_ref()?;
    let mut line = format!("{} ({})", describe(counts), counts.runner);
    let log = d.tests.as_ref().and_then(|t| t.log_counts.as_ref());
    if let Some(log) = log.filter(|log| {
        (log.passed, log.failed, log.skipped) != (counts.passed, counts.failed, counts.skipped)
    }) {
        line.push_str(&format!(
            "; the log ({}) said {}",
            log.runner,
            describe(log)
        ));
    }
    Some(line)
}

/// The folder of the manifest at `manifest_path` (`sub/` for `sub/verify-matrix.yml`,
/// empty at the root): failure locations are relative to it.
pub fn manifest_folder(manifest_path: &str) -> String {
    manifest_path
        .rsplit_once('/')
        .map_or(String::new(), |(dir, _)| format!("{dir}/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(message: &str, file: Option<&str>) -> TestResult {
        TestResult {
            suite: "s".into(),
            name: "t".into(),
            outcome: TestOutcome::Failed,
            duration_ms: None,
            message: Some(message.into()),
            output: None,
            file: file.map(Into::into),
            line: Some(12),
            id: None,
            quarantined: false,
            history: None,
        }
    }

    #[test]
    fn a_message_shows_the_values_and_not_the_place_twice() {
        assert_eq!(
            message_line(&failed(
                "expect(received).toBe(expected) // Object.is equality\n\nExpected: 4\nReceived: 5",
                Some("sum.test.js")
            )),
            "expect(received).toBe(expected) // Object.is equality · Expected: 4 · Received: 5"
        );
        assert_eq!(
            message_line(&failed(
                "thread 'tests::sub' (5950) panicked at src/lib.rs:21:9:\nassertion `left == right` failed\n  left: 1\n right: 2",
                Some("src/lib.rs")
            )),
            "assertion `left == right` failed · left: 1 · right: 2"
        );
        assert_eq!(
            message_line(&failed(
                "calc_test.go:12: Add(1, 2) = 3; want 4",
                Some("calc/calc_test.go")
            )),
            "Add(1, 2) = 3; want 4"
        );
        assert_eq!(
            message_line(&failed(&"x".repeat(400), None))
                .chars()
                .count(),
            301
        );
    }
}
