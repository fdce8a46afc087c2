//! `prove -v`'s own output around its test files' TAP: a line naming each file, its
//! verdict after its TAP, and a summary that is held against what the files showed.

use std::sync::LazyLock;

use regex::Regex;

use super::line::point;
use super::{Block, Case, MAX_SEGMENT_BYTES, ReadError, Reader, bounded};

/// prove's line naming a test file: `t/math.t ... `, `[10:46:10] t/a.t .. ok`.
pub(super) static PROVE_FILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\[\d\d:\d\d:\d\d\] )?(\S*[./]\S*) \.{2,}(?: (.*))?$").expect("valid regex")
});
/// prove's verdict on a file after its TAP: `ok`, `ok      166 ms ( 0.00 usr … )`.
static PROVE_OK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^ok(?:\s+\d+(?:\.\d+)? ?ms\b.*)?\s*$").expect("valid regex"));
/// prove's summary: `Files=2, Tests=7,  0 wallclock secs …`.
static PROVE_TOTALS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^Files=(\d{1,18}), Tests=(\d{1,18}),").expect("valid regex"));

/// prove's own account of the run.
#[derive(Default)]
pub(super) struct Prove {
    /// Reading its summary: no more TAP.
    pub(super) summary: bool,
    /// The files it named, those it skipped whole, and their tests (top-level lines).
    pub(super) files: u64,
    pub(super) skipped_files: u64,
    pub(super) tests: u64,
    /// Its `Files=…, Tests=…`.
    pub(super) totals: Option<(u64, u64)>,
    /// Its `Result: …`.
    pub(super) result: Option<String>,
    /// Something after its `Result:` (another run's output appended, `>>`).
    pub(super) after_result: bool,
    /// A file is being read: skipped whole (`skipped: reason`), its `Dubious` line.
    pub(super) open: bool,
    pub(super) skipped: bool,
    pub(super) dubious: Option<String>,
}

impl Reader<'_, '_> {
    /// A line of prove's own (not its test files' TAP); true when it was one.
    pub(super) fn prove_line(&mut self, text: &str) -> bool {
        let Some(prove) = &mut self.prove else {
            return false;
        };
        if prove.result.is_some() {
            // prove's last line is its `Result:`.
            prove.after_result |= !text.trim().is_empty();
            return true;
        } else if prove.summary {
            // `Failed tests:  2, 6`, `Parse errors: …`: what the checks here find.
        } else if text.starts_with("All tests successful.")
            || text == "Test Summary Report"
            || (indent_free(text) && (PROVE_TOTALS.is_match(text) || text.starts_with("Result: ")))
        {
            prove.summary = true;
        } else if let Some(file) = PROVE_FILE.captures(text)
            && point(text).is_none()
        {
            let name = bounded(&file[1], MAX_SEGMENT_BYTES);
            let skipped = file
                .get(2)
                .is_some_and(|rest| rest.as_str().trim_start().starts_with("skipped"));
            self.end_file();
            self.blocks = vec![Block::top(Some(name))];
            self.announced.clear();
            self.trailing_plan = false;
            if let Some(prove) = &mut self.prove {
                prove.files += 1;
                prove.skipped_files += u64::from(skipped);
                prove.open = true;
                prove.skipped = skipped;
                prove.dubious = None;
            }
            return true;
        } else if !prove.open {
            return false;
        } else if PROVE_OK.is_match(text) {
            self.finish_point();
            return true;
        } else if text.starts_with("Dubious, test returned ") {
            prove.dubious = Some(text.to_owned());
            self.finish_point();
            return true;
        } else {
            return false;
        }
        // The summary.
        self.end_file();
        let Some(prove) = &mut self.prove else {
            return true;
        };
        if let Some(totals) = PROVE_TOTALS.captures(text) {
            let n = |i: usize| totals[i].parse().unwrap_or(u64::MAX);
            prove.totals = Some((n(1), n(2)));
        } else if let Some(result) = text.strip_prefix("Result: ") {
            prove.result = Some(result.trim().to_owned());
        }
        true
    }

    /// The end of one of prove's files: its checks, as at the end of a stream.
    pub(super) fn end_file(&mut self) {
        let Some(prove) = &mut self.prove else { return };
        if !prove.open || self.bailed {
            return;
        }
        prove.open = false;
        let (skipped, dubious) = (prove.skipped, prove.dubious.take());
        self.close_all();
        let top = &self.blocks[0];
        let points = top.points;
        if let Some(prove) = &mut self.prove {
            prove.tests += points;
        }
        if top.plan.is_none() && points == 0 {
            if !skipped {
                self.add(
                    0,
                    Case::error("(the plan)", "no plan and no test".to_owned()),
                );
            }
        } else {
            self.check_plan();
        }
        // A file that exited non-zero with nothing failed in it (a crash after its
        // last test) did not pass.
        if let Some(dubious) = dubious
            && !self.blocks[0].failed
        {
            let message = format!("prove: {dubious}, yet no test failed");
            self.add(0, Case::error("(the test file)", message));
        }
    }

    /// The end of prove's output: its summary against the files it showed.
    pub(super) fn finish_prove(&mut self) -> Result<(), ReadError> {
        self.end_file();
        let Some(prove) = self.prove.take() else {
            return Ok(());
        };
        if !self.saw_tap && !self.bailed && prove.files > prove.skipped_files {
            return Err(ReadError::new(
                "prove's output shows no test line: run prove with -v, so that it prints each file's TAP",
            ));
        }
        let mut why = Vec::new();
        if let Some((files, tests)) = prove.totals
            && !self.bailed
        {
            if files != prove.files {
                why.push(format!("{files} files, its output shows {}", prove.files));
            }
            if tests != prove.tests {
                why.push(format!("{tests} tests, its output shows {}", prove.tests));
            }
        }
        if prove.result.as_deref() == Some("FAIL") && self.failures == 0 {
            why.push("the result FAIL, yet no test failed".to_owned());
        }
        let mut said = Vec::new();
        if !why.is_empty() {
            said.push(format!("prove's summary counts {}", why.join("; ")));
        }
        // Cut before prove finished (killed, or a file read while it ran): the files
        // it did not reach would be passed over.
        if prove.result.is_none() && !self.bailed {
            said.push(
                "prove's output ends before its `Result:` line: prove did not finish".to_owned(),
            );
        }
        if prove.after_result {
            said.push(
                "prove's output goes on after its `Result:` line (another run's output, appended?)"
                    .to_owned(),
            );
        }
        if !said.is_empty() {
            self.emit("", Case::error("(the summary)", said.join("; ")));
        }
        Ok(())
    }
}

/// Whether `text` begins at the line's start (prove's own lines do; a test's output
/// that happens to read `Result: PASS` is indented under its subtest or follows `#`).
fn indent_free(text: &str) -> bool {
    !text.starts_with([' ', '\t', '#'])
}
