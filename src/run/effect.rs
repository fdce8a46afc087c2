//! Gate effectiveness: did a green gate really do its work? A `cargo test` that ran 0
//! tests, a Gradle task that was `UP-TO-DATE`, a `go test` result from cache all exit 0.
//!
//! The log is read line by line (a huge log is never held whole), ANSI escapes removed,
//! and every line offered to each runner's summary pattern, behind a cheap substring
//! test so that most lines cost no regex at all. Counts from several runners in one log
//! (a `make test` running two suites) are added up.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::manifest::Gate;
use crate::results::TestCounts;
use crate::results::logs::strip_ansi;

/// What the log says about the gate.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Assessment {
    pub gate_effective: Option<bool>,
    pub tests_executed: Option<u64>,
    pub test_counts: Option<TestCounts>,
    pub ineffective_reason: Option<String>,
    /// Evidence without a test count, for the summary: `go test` without `-v` or
    /// `-json` reports packages only ("2 packages passed").
    pub packages: Option<String>,
}

/// Reads the log at `path` and judges a gate of kind `gate`.
pub fn assess_file(gate: Gate, path: &Path) -> Assessment {
    assess_file_from(gate, path, 0)
}

/// Like [`assess_file`], reading from byte `offset` (the start of the last attempt).
pub fn assess_file_from(gate: Gate, path: &Path, offset: u64) -> Assessment {
    use std::io::{Seek, SeekFrom};
    let Ok(mut file) = std::fs::File::open(path) else {
        return Assessment::default();
    };
    if file.seek(SeekFrom::Start(offset)).is_err() {
        return Assessment::default();
    }
    let mut scan = Scan::new(gate);
    for_each_line(BufReader::with_capacity(64 * 1024, file), |line| {
        scan.raw_line(line)
    });
    scan.finish()
}

/// The longest part of a line that is looked at: summaries are short, and a command
/// printing one endless line must not make the tool hold it.
const MAX_LINE: usize = 64 * 1024;

/// Calls `f` with each line of `reader` (without its newline), each cut to
/// [`MAX_LINE`] bytes, holding no more than one such line at a time.
fn for_each_line(mut reader: impl BufRead, mut f: impl FnMut(&[u8])) {
    let mut line = Vec::with_capacity(1024);
    loop {
        let buf = match reader.fill_buf() {
            Ok([]) => break,
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let (part, used, ended) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        let room = MAX_LINE.saturating_sub(line.len());
        line.extend_from_slice(&part[..part.len().min(room)]);
        reader.consume(used);
        if ended {
            f(&line);
            line.clear();
        }
    }
    if !line.is_empty() {
        f(&line);
    }
}

/// Judges a gate from log text already in memory.
pub fn assess_text(gate: Gate, text: &str) -> Assessment {
    let mut scan = Scan::new(gate);
    for line in text.lines() {
        scan.line(line);
    }
    scan.finish()
}

#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    passed: u64,
    failed: u64,
    skipped: u64,
}

/// The running state of one log's scan.
struct Scan {
    gate: Gate,
    /// Per runner, in the order first seen.
    tallies: Vec<(&'static str, Tally)>,
    /// A no-op marker: the work was skipped (up to date, from cache).
    noop: Option<String>,
    /// A runner saying it found nothing to run.
    nothing: Option<String>,
    maven_results: bool,
    go_verbose: Tally,
    go_verbose_seen: bool,
    /// A `=== RUN` line: `go test -v`, whose `--- PASS/FAIL/SKIP` lines count every
    /// test. Without it only failures print `--- FAIL`, which count nothing.
    go_run_seen: bool,
    go_packages: Tally,
    go_packages_seen: bool,
    /// Per-test events of `go test -json`: exact counts.
    go_json: Tally,
    go_json_seen: bool,
    ctest_skipped: u64,
}

/// One event of `go test -json` (test2json), the fields counted here.
#[derive(serde::Deserialize)]
struct GoEvent {
    #[serde(rename = "Action")]
    action: String,
    #[serde(rename = "Test")]
    test: Option<String>,
    #[serde(rename = "Output")]
    output: Option<String>,
}

macro_rules! re {
    ($name:ident, $pattern:expr) => {
        static $name: LazyLock<Regex> =
            LazyLock::new(|| Regex::new($pattern).expect("valid regex"));
    };
}

re!(
    LIBTEST,
    r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; \d+ measured; \d+ filtered out"
);
re!(NEXTEST, r"^\s*Summary \[[^\]]*\]\s+(\d+) tests? run: (.*)$");
re!(COUNT_WORD, r"(\d+) ([A-Za-z][A-Za-z ]*?)(?:,|\||\(|$)");
re!(
    PYTEST,
    r"^=*\s*((?:\d+ [a-z]+(?:, )?)+) in [\d.]+s(?: \([^)]*\))?\s*=*\s*$"
);
re!(JEST, r"^Tests:\s+(.*?),?\s*(\d+) total\s*$");
re!(VITEST, r"^\s*Tests\s+(.*\d+ [a-z]+.*)\s*\((\d+)\)\s*$");
re!(VITEST_NONE, r"^\s*Tests\s+no tests\s*$");
re!(MOCHA, r"^\s*(\d+) (passing|failing|pending)\b");
re!(
    NODE,
    r"^(?:#|ℹ) (tests|pass|fail|cancelled|skipped|todo) (\d+)\s*$"
);
re!(GO_CASE, r"^\s*--- (PASS|FAIL|SKIP): ");
re!(GO_PACKAGE, r"^(ok|FAIL)\s+\S+\s+(\(cached\)|[\d.]+s)(.*)$");
re!(
    MAVEN,
    r"^Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)\s*$"
);
re!(
    GRADLE,
    r"^(\d+) tests? completed, (\d+) failed(?:, (\d+) skipped)?"
);
re!(
    GRADLE_TASK,
    r"^> Task (\S+) (UP-TO-DATE|FROM-CACHE|NO-SOURCE)\s*$"
);
re!(PHPUNIT_OK, r"^OK \((\d+) tests?, \d+ assertions?\)");
re!(PHPUNIT, r"^Tests: (\d+), Assertions: \d+(.*)$");
re!(
    RSPEC,
    r"^(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?(?:, (\d+) errors? occurred outside of examples)?"
);
re!(
    EXUNIT,
    r"^(?:\d+ (?:doctests?|propert(?:y|ies)), )*\d+ tests?, \d+ failures?"
);
re!(
    DOTNET_VSTEST,
    r"^\s*(?:Passed|Failed)!\s+-\s+Failed:\s+(\d+), Passed:\s+(\d+), Skipped:\s+(\d+), Total:\s+(\d+)"
);
re!(
    DOTNET_MTP,
    r"^\s*Test summary: total: (\d+), failed: (\d+), succeeded: (\d+), skipped: (\d+)"
);
re!(
    CTEST,
    r"^\d+% tests passed, (\d+) tests? failed out of (\d+)"
);

/// Every word a summary, marker or runner message above contains; a line without any of
/// them cannot matter.
static TRIGGER: LazyLock<regex::bytes::Regex> = LazyLock::new(|| {
    regex::bytes::Regex::new(
        r"test result: |Summary \[|passed|failed|skipped|deselected|error|no tests ran|Tests|passing|failing|pending|# |ℹ |--- |ok |ok\t|FAIL|Results:|completed|OK \(|example|failure|Failed:|Test summary|\*\*\*Skipped|% tests passed|Task |No test|no test|No examples|No tests",
    )
    .expect("valid regex")
});

/// What runners print when they found nothing to run.
const NOTHING_MARKERS: &[&str] = &[
    "No tests found",
    "no tests ran",
    "No test files found",
    "no tests to run",
    "No tests to run",
    "[no tests to run]",
    "No tests were found",
    "No tests executed",
    "No examples found",
    "No test is available",
];

impl Scan {
    fn new(gate: Gate) -> Scan {
        Scan {
            gate,
            tallies: Vec::new(),
            noop: None,
            nothing: None,
            maven_results: false,
            go_verbose: Tally::default(),
            go_verbose_seen: false,
            go_run_seen: false,
            go_packages: Tally::default(),
            go_packages_seen: false,
            go_json: Tally::default(),
            go_json_seen: false,
            ctest_skipped: 0,
        }
    }

    fn add(&mut self, runner: &'static str, passed: u64, failed: u64, skipped: u64) {
        let tally = match self.tallies.iter_mut().find(|(r, _)| *r == runner) {
            Some((_, tally)) => tally,
            None => {
                self.tallies.push((runner, Tally::default()));
                &mut self.tallies.last_mut().expect("just pushed").1
            }
        };
        tally.passed += passed;
        tally.failed += failed;
        tally.skipped += skipped;
    }

    /// For runners that report a total: passed = total − failed − skipped.
    fn add_total(&mut self, runner: &'static str, total: u64, failed: u64, skipped: u64) {
        self.add(
            runner,
            total.saturating_sub(failed + skipped),
            failed,
            skipped,
        );
    }

    /// A line straight from the log: most lines mention nothing a summary is made of,
    /// and one pass of a literal-alternation regex over the bytes skips them.
    fn raw_line(&mut self, raw: &[u8]) {
        if raw.starts_with(b"{\"")
            && raw.windows(10).any(|w| w == b"\"Action\":\"")
            && self.go_event(raw)
        {
            return;
        }
        if raw.starts_with(b"=== RUN") {
            self.go_run_seen = true;
            return;
        }
        if TRIGGER.is_match(raw) {
            self.line(&String::from_utf8_lossy(raw));
        }
    }

    /// A `go test -json` event; false when the line is not one after all.
    fn go_event(&mut self, raw: &[u8]) -> bool {
        let Ok(event) = serde_json::from_slice::<GoEvent>(raw) else {
            return false;
        };
        self.go_json_seen = true;
        match (event.action.as_str(), &event.test) {
            ("pass", Some(_)) => self.go_json.passed += 1,
            ("fail", Some(_)) => self.go_json.failed += 1,
            ("skip", Some(_)) => self.go_json.skipped += 1,
            // A package's own line (`ok … (cached)`, `[no tests to run]`) is read as in a
            // plain log; its counts give way to the events' in `finish`.
            ("output", None) => {
                if let Some(text) = event.output {
                    self.line(&text);
                }
            }
            _ => {}
        }
        true
    }

    fn line(&mut self, raw: &str) {
        let stripped;
        let line = if raw.contains('\u{1b}') {
            stripped = strip_ansi(raw);
            stripped.as_str()
        } else {
            raw
        };
        let line = line.trim_end_matches(['\n', '\r']);
        // Maven prefixes every line with its level.
        let line = ["[INFO] ", "[ERROR] ", "[WARNING] "]
            .iter()
            .find_map(|p| line.strip_prefix(p))
            .unwrap_or(line);

        if self.nothing.is_none()
            && let Some(marker) = NOTHING_MARKERS.iter().find(|m| line.contains(*m))
        {
            self.nothing = Some((*marker).to_owned());
        }
        if line.contains("Task ") {
            self.gradle_task(line);
        }
        if line.starts_with("test result: ") {
            if let Some(c) = LIBTEST.captures(line) {
                self.add("libtest", num(&c, 1), num(&c, 2), num(&c, 3));
            }
            return;
        }
        if line.contains("Summary [") {
            if let Some(c) = NEXTEST.captures(line) {
                let items = count_items(&c[2]);
                self.add(
                    "nextest",
                    sum(&items, &["passed"]),
                    sum(&items, &["failed", "timed out"]),
                    sum(&items, &["skipped"]),
                );
            }
            return;
        }
        if line.contains(" in ")
            && let Some(c) = PYTEST.captures(line)
        {
            let items = count_items(&c[1]);
            self.add(
                "pytest",
                sum(&items, &["passed", "xfailed", "xpassed"]),
                sum(&items, &["failed", "error", "errors"]),
                sum(&items, &["skipped", "deselected"]),
            );
            return;
        }
        if line.starts_with("Tests:")
            && let Some(c) = JEST.captures(line)
        {
            let items = count_items(&c[1]);
            let (passed, failed) = (sum(&items, &["passed"]), sum(&items, &["failed"]));
            self.add("jest", passed, failed, sum(&items, &["skipped", "todo"]));
            return;
        }
        if line.contains("Tests ") && VITEST_NONE.is_match(line) {
            // vitest found test files but no test in them.
            self.add("vitest", 0, 0, 0);
            return;
        }
        if line.contains("Tests ")
            && !line.contains("Test Files")
            && let Some(c) = VITEST.captures(line)
        {
            let items = count_items(&c[1]);
            let (passed, failed) = (sum(&items, &["passed"]), sum(&items, &["failed"]));
            self.add("vitest", passed, failed, sum(&items, &["skipped", "todo"]));
            return;
        }
        if (line.contains("passing") || line.contains("failing") || line.contains("pending"))
            && let Some(c) = MOCHA.captures(line)
        {
            let n = num(&c, 1);
            match &c[2] {
                "passing" => self.add("mocha", n, 0, 0),
                "failing" => self.add("mocha", 0, n, 0),
                _ => self.add("mocha", 0, 0, n),
            }
            return;
        }
        if (line.starts_with("# ") || line.starts_with("ℹ "))
            && let Some(c) = NODE.captures(line)
        {
            let n = num(&c, 2);
            match &c[1] {
                "pass" => self.add("node:test", n, 0, 0),
                "fail" | "cancelled" => self.add("node:test", 0, n, 0),
                "skipped" | "todo" => self.add("node:test", 0, 0, n),
                // `tests` is the sum of the others.
                _ => self.add("node:test", 0, 0, 0),
            }
            return;
        }
        if line.contains("--- ")
            && let Some(c) = GO_CASE.captures(line)
        {
            self.go_verbose_seen = true;
            match &c[1] {
                "PASS" => self.go_verbose.passed += 1,
                "FAIL" => self.go_verbose.failed += 1,
                _ => self.go_verbose.skipped += 1,
            }
            return;
        }
        if (line.starts_with("ok ") || line.starts_with("ok\t") || line.starts_with("FAIL"))
            && let Some(c) = GO_PACKAGE.captures(line)
        {
            self.go_packages_seen = true;
            if &c[2] == "(cached)" && self.noop.is_none() {
                self.noop = Some(format!(
                    "`{}`: result from the go test cache",
                    one_line(line)
                ));
            }
            if !c[3].contains("[no tests to run]") {
                if &c[1] == "ok" {
                    self.go_packages.passed += 1;
                } else {
                    self.go_packages.failed += 1;
                }
            }
            return;
        }
        if line.starts_with("Results:") {
            self.maven_results = true;
            return;
        }
        if line.starts_with("Tests run:") {
            if self.maven_results
                && let Some(c) = MAVEN.captures(line)
            {
                let (run, failures, errors, skipped) =
                    (num(&c, 1), num(&c, 2), num(&c, 3), num(&c, 4));
                let failed = failures + errors;
                self.add_total("surefire", run, failed, skipped);
                self.maven_results = false;
            }
            return;
        }
        if line.contains("tests completed") || line.contains("test completed") {
            if let Some(c) = GRADLE.captures(line) {
                let (total, failed) = (num(&c, 1), num(&c, 2));
                let skipped = num(&c, 3);
                self.add_total("gradle", total, failed, skipped);
            }
            return;
        }
        if line.starts_with("OK (") {
            if let Some(c) = PHPUNIT_OK.captures(line) {
                self.add("phpunit", num(&c, 1), 0, 0);
            }
            return;
        }
        if line.starts_with("Tests: ") {
            if let Some(c) = PHPUNIT.captures(line) {
                let total = num(&c, 1);
                let extra = phpunit_items(&c[2]);
                let failed = sum(&extra, &["Failures", "Errors"]);
                let skipped = sum(&extra, &["Skipped", "Incomplete"]);
                self.add_total("phpunit", total, failed, skipped);
            }
            return;
        }
        if line.contains("example") {
            if let Some(c) = RSPEC.captures(line) {
                let (total, failed) = (num(&c, 1), num(&c, 2));
                let pending = num(&c, 3);
                let outside = num(&c, 4);
                self.add(
                    "rspec",
                    total.saturating_sub(failed + pending),
                    failed + outside,
                    pending,
                );
            }
            return;
        }
        if line.contains("failure") && EXUNIT.is_match(line) {
            let items = count_items(line);
            let total = sum(
                &items,
                &[
                    "doctest",
                    "doctests",
                    "test",
                    "tests",
                    "property",
                    "properties",
                ],
            );
            let failed = sum(&items, &["failure", "failures", "invalid"]);
            let skipped = sum(&items, &["skipped", "excluded"]);
            self.add_total("exunit", total, failed, skipped);
            return;
        }
        if line.contains("Failed:") {
            if let Some(c) = DOTNET_VSTEST.captures(line) {
                self.add("dotnet test", num(&c, 2), num(&c, 1), num(&c, 3));
            }
            return;
        }
        if line.contains("Test summary:") {
            if let Some(c) = DOTNET_MTP.captures(line) {
                self.add("dotnet test", num(&c, 3), num(&c, 2), num(&c, 4));
            }
            return;
        }
        if line.contains("***Skipped") {
            self.ctest_skipped += 1;
            return;
        }
        if line.contains("% tests passed")
            && let Some(c) = CTEST.captures(line)
        {
            let (failed, total) = (num(&c, 1), num(&c, 2));
            let skipped = self.ctest_skipped;
            self.add_total("ctest", total, failed, skipped);
        }
    }

    fn gradle_task(&mut self, line: &str) {
        let Some(c) = GRADLE_TASK.captures(line) else {
            return;
        };
        // For a test gate, only a test task that did not run means the tests did not.
        let task = c[1].to_ascii_lowercase();
        let relevant = self.gate != Gate::Test
            || (task.contains("test")
                && !task.contains("compile")
                && !task.contains("classes")
                && !task.contains("resources"));
        if relevant && self.noop.is_none() {
            self.noop = Some(format!("`{}`: the task did not run", one_line(line)));
        }
    }

    fn finish(mut self) -> Assessment {
        let mut packages = None;
        if self.go_json_seen {
            let t = self.go_json;
            self.add("go test -json", t.passed, t.failed, t.skipped);
        } else if self.go_verbose_seen && self.go_run_seen {
            let t = self.go_verbose;
            self.add("go test", t.passed, t.failed, t.skipped);
        } else if self.go_packages_seen {
            // Without -v or -json only packages are known (a failing one also prints its
            // failed tests, a passing one nothing): packages, not tests, are counted.
            let t = self.go_packages;
            if t.passed + t.failed > 0 {
                packages = Some(format!(
                    "{} package{} passed{}",
                    t.passed,
                    if t.passed == 1 { "" } else { "s" },
                    if t.failed > 0 {
                        format!(", {} failed", t.failed)
                    } else {
                        String::new()
                    }
                ));
            }
        }
        let counts = (!self.tallies.is_empty()).then(|| {
            let total = self
                .tallies
                .iter()
                .fold(Tally::default(), |acc, (_, t)| Tally {
                    passed: acc.passed + t.passed,
                    failed: acc.failed + t.failed,
                    skipped: acc.skipped + t.skipped,
                });
            let runner = self
                .tallies
                .iter()
                .map(|(r, _)| *r)
                .collect::<Vec<_>>()
                .join("+");
            TestCounts {
                passed: total.passed,
                failed: total.failed,
                skipped: total.skipped,
                runner,
            }
        });
        let executed = counts.as_ref().map(|c| c.passed + c.failed);
        let ineffective = |reason: String| Some(reason);
        let reason = if let Some(noop) = self.noop.take() {
            ineffective(format!("no-op: {noop}"))
        } else if self.gate != Gate::Test || (counts.is_none() && packages.is_some()) {
            // A package that printed `ok` without `[no tests to run]` ran tests.
            None
        } else {
            match (&counts, executed) {
                (Some(c), Some(0)) => ineffective(match &self.nothing {
                    Some(marker) => format!("0 tests executed ({}: \"{marker}\")", c.runner),
                    None => format!("0 tests executed ({})", c.runner),
                }),
                (Some(_), _) => None,
                (None, _) => ineffective(match &self.nothing {
                    Some(marker) => format!("0 tests executed (\"{marker}\")"),
                    None => "no test summary recognised".to_owned(),
                }),
            }
        };
        let tests_executed = match self.gate {
            Gate::Test => executed.or(self.nothing.as_ref().map(|_| 0)),
            _ => executed,
        };
        Assessment {
            gate_effective: Some(reason.is_none()),
            tests_executed,
            test_counts: counts,
            ineffective_reason: reason,
            packages,
        }
    }
}

/// A log line for a message: whitespace runs (tabs in `go test` output) made one space.
fn one_line(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn num(c: &regex::Captures<'_>, i: usize) -> u64 {
    c.get(i).and_then(|m| m.as_str().parse().ok()).unwrap_or(0)
}

/// `3 passed, 1 failed | 2 skipped` → [(3, "passed"), (1, "failed"), (2, "skipped")].
fn count_items(text: &str) -> Vec<(u64, String)> {
    COUNT_WORD
        .captures_iter(text)
        .filter_map(|c| Some((c[1].parse().ok()?, c[2].trim().to_owned())))
        .collect()
}

/// The sum of the counts of `items` whose word is one of `words`.
fn sum(items: &[(u64, String)], words: &[&str]) -> u64 {
    items
        .iter()
        .filter(|(_, word)| words.contains(&word.as_str()))
        .map(|(n, _)| n)
        .sum()
}

/// `, Errors: 1, Failures: 1, Skipped: 1.` → [(1, "Errors"), …].
fn phpunit_items(text: &str) -> Vec<(u64, String)> {
    text.trim_end_matches('.')
        .split(',')
        .filter_map(|part| {
            let (key, value) = part.split_once(':')?;
            Some((value.trim().parse().ok()?, key.trim().to_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(text: &str) -> (u64, u64, u64, String) {
        let a = assess_text(Gate::Test, text);
        let c = a
            .test_counts
            .clone()
            .unwrap_or_else(|| panic!("no counts in {text:?}: {a:?}"));
        (c.passed, c.failed, c.skipped, c.runner)
    }

    #[test]
    fn libtest_lines_are_summed_and_indented_reprints_ignored() {
        let log = "running 3 tests\ntest result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.1s\n    test result: ok. 9 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\ntest result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        assert_eq!(counts(log), (3, 1, 1, "libtest".into()));
    }

    #[test]
    fn ansi_escapes_are_removed_first() {
        let log = "\u{1b}[1m\u{1b}[32mtest result: ok\u{1b}[0m\u{1b}(B. 4 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n";
        // The line starts with an escape: only after stripping does it start with `test result`.
        assert_eq!(counts(log), (4, 0, 0, "libtest".into()));
    }

    #[test]
    fn zero_tests_is_ineffective_with_the_reason() {
        let a = assess_text(
            Gate::Test,
            "running 0 tests\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n",
        );
        assert_eq!(a.gate_effective, Some(false));
        assert_eq!(a.tests_executed, Some(0));
        assert_eq!(
            a.ineffective_reason.as_deref(),
            Some("0 tests executed (libtest)")
        );
    }

    #[test]
    fn nothing_recognised() {
        let a = assess_text(Gate::Test, "all good\n");
        assert_eq!(a.gate_effective, Some(false));
        assert_eq!(
            a.ineffective_reason.as_deref(),
            Some("no test summary recognised")
        );
        assert_eq!(a.tests_executed, None);
    }

    #[test]
    fn other_gates_only_look_for_no_op_markers() {
        assert_eq!(
            assess_text(Gate::Build, "compiled\n").gate_effective,
            Some(true)
        );
        let a = assess_text(Gate::Build, "> Task :compileJava UP-TO-DATE\n");
        assert_eq!(a.gate_effective, Some(false));
        assert!(a.ineffective_reason.unwrap().contains("UP-TO-DATE"));
        // A test gate does not mind compilation being up to date, only the test task.
        let a = assess_text(
            Gate::Test,
            "> Task :compileJava UP-TO-DATE\n> Task :test\n5 tests completed, 1 failed\n",
        );
        assert_eq!(a.gate_effective, Some(true));
    }

    #[test]
    fn lines_are_cut_and_the_last_needs_no_newline() {
        let text = format!("short\n{}\nend", "x".repeat(MAX_LINE * 3));
        let mut seen = Vec::new();
        for_each_line(
            std::io::BufReader::with_capacity(1000, text.as_bytes()),
            |l| seen.push(l.len()),
        );
        assert_eq!(seen, [5, MAX_LINE, 3]);
    }

    #[test]
    fn a_summary_after_an_endless_line_is_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let log = format!(
            "{}\ntest result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n",
            "\0".repeat(MAX_LINE * 4)
        );
        std::fs::write(&path, log).unwrap();
        let a = assess_file(Gate::Test, &path);
        assert_eq!(a.tests_executed, Some(2));
    }

    #[test]
    fn count_items_reads_lists() {
        assert_eq!(
            count_items("1 failed | 1 passed | 1 skipped | 1 todo (4)"),
            vec![
                (1, "failed".into()),
                (1, "passed".into()),
                (1, "skipped".into()),
                (1, "todo".into())
            ]
        );
    }
}
