//! TAP, the Test Anything Protocol (12, 13 and 14), as Node's test runner (`node --test`,
//! its `tap` reporter), Perl's Test::More (`perl t/x.t`, `prove -v`) and Bats (`bats
//! --tap`, `--formatter tap13`) write it: `ok N - name` and `not ok N - name`, a plan
//! `1..N`, `# SKIP` and `# TODO` directives, indented subtests, YAML diagnostics between
//! `---` and `...`, and `Bail out!`.
//!
//! How it is counted (the decisions TAP leaves to its readers):
//!
//! - A subtest's tests are named by the path of their parents' names, joined with " › "
//!   (as CTRF's suite paths are): the whole path is the test's identity.
//! - A test point with subtests of its own (node's `describe`, Test::More's `subtest`)
//!   only sums them up, and is not itself a test — unless it failed and nothing beneath
//!   it did (a hook, an assertion after its subtests, a crash) or node says its failure
//!   is its own (`failureType` other than `subtestsFailed`): a failure is never lost.
//! - `# SKIP` is skipped, whether `ok` or `not ok` (as TAP::Harness reads it). A `# TODO`
//!   that fails is an expected failure, not a failure: skipped; one that passes passed.
//! - What a stream says of itself is held against its tests, each contradiction an
//!   Error test: a plan `1..N` that is not the count of the tests at its level, no plan
//!   at all (a stream cut short), tests out of sequence, a subtest that never ended,
//!   `Bail out!`, node's closing counts (`# tests 3`, `# fail 1`) and prove's summary
//!   (`Files=2, Tests=7`, `Result: FAIL`) that the tests do not bear out.
//! - A stream with no plan and no test, a YAML block never closed, a test line longer
//!   than [`MAX_LINE`] or subtests nested deeper than [`MAX_DEPTH`] cannot be read.
//!
//! `prove -v`'s own output (each file's name, then its TAP, then its verdict) is read as
//! one TAP stream per file, its tests' suite the file's name.

use std::io::BufRead;
use std::sync::LazyLock;

use regex::Regex;

use super::{Collector, ReadError, capture};
use crate::results::TestOutcome;

mod levels;
mod line;
mod prove;
mod said;

use levels::{Block, Case};
use line::{Directive, PLAN, Parsed, VERSION, bounded, point, read_line};
use prove::{PROVE_FILE, Prove};
use said::Said;

/// The longest line read; the rest of a longer one is skipped, and a longer test or
/// plan line is refused (cutting it could drop its directive).
const MAX_LINE: usize = 1024 * 1024;
/// The deepest subtest nesting read.
const MAX_DEPTH: usize = 64;
/// The most bytes of one name kept. The Collector keeps [`super::MAX_NAME_CHARS`] (500)
/// characters of a name or suite, masked first; 2,048 bytes are at least 512
/// characters, so nothing near this cut survives that.
const MAX_SEGMENT_BYTES: usize = 2048;
/// The most bytes of a joined suite path kept (as above).
const MAX_SUITE_BYTES: usize = 2048;
/// The most bytes of tests held while their parent's name is not known yet (a subtest
/// without a `# Subtest:` line is named by its parent's line, after its tests).
const MAX_PENDING_BYTES: usize = 32 * 1024 * 1024;
/// How suite paths are joined (as the CTRF reader joins them).
const SEPARATOR: &str = " › ";

/// node's closing counts: `# tests 8`, `# fail 1`.
static NODE_COUNT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^#\s*(tests|pass|fail|cancelled|skipped|todo)\s+(\d{1,18})\s*$")
        .expect("valid regex")
});

/// Whether the first bytes of a file look like TAP: skipping blank and comment lines,
/// a `TAP version` line, a plan, a test line, `Bail out!`, or prove's line naming a file.
pub(super) fn looks_like(head: &[u8]) -> bool {
    for line in head.split(|&b| b == b'\n') {
        let text = String::from_utf8_lossy(line);
        let text = text.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        return text.starts_with("TAP version ")
            || PLAN.is_match(text)
            || point(text).is_some()
            || text.starts_with("Bail out!")
            || PROVE_FILE.is_match(text);
    }
    false
}

/// Reads a TAP stream into `sink`.
pub(super) fn read(mut source: impl BufRead, sink: &mut Collector<'_>) -> Result<(), ReadError> {
    let mut reader = Reader::new(sink);
    let mut line = Vec::new();
    loop {
        line.clear();
        let (read, cut) = read_line(&mut source, &mut line)
            .map_err(|e| ReadError::at_line(e.to_string(), reader.number + 1))?;
        if read == 0 {
            break;
        }
        reader.number += 1;
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        if reader.line(text, cut)? == Flow::Stop {
            break;
        }
    }
    reader.finish()
}

/// Whether to read on.
#[derive(PartialEq, Eq)]
enum Flow {
    Go,
    Stop,
}

/// A test line being read: its YAML block and comments may follow.
struct Point {
    depth: usize,
    ok: bool,
    directive: Option<Directive>,
    name: String,
    /// Whether it has subtests, and whether something among them failed.
    children: Option<bool>,
    /// Its time, when its line gives it (`bats --tap --timing`).
    duration_ms: Option<u64>,
    yaml: Option<String>,
    comments: String,
}

/// A YAML block being read.
struct Yaml {
    indent: usize,
    opened: u64,
    text: String,
}

/// node's closing counts, and the same counted from the stream as node counts them.
#[derive(Default)]
struct NodeCounts {
    tests: Option<u64>,
    pass: Option<u64>,
    fail: Option<u64>,
    cancelled: Option<u64>,
    /// Every test line but a `describe` block's (`type: 'suite'`).
    shown_tests: u64,
    /// Of those, the ones that failed (neither SKIP nor TODO).
    shown_failing: u64,
}

/// The reading of one stream, line by line.
struct Reader<'s, 'l> {
    sink: &'s mut Collector<'l>,
    number: u64,
    blocks: Vec<Block>,
    /// `# Subtest:` names by the depth of their line, not yet used.
    announced: Vec<Option<String>>,
    current: Option<Point>,
    yaml: Option<Yaml>,
    /// A line that is not blank was read (prove's output is told by its first).
    started: bool,
    /// A top-level plan came after the tests: node's counts may follow.
    trailing_plan: bool,
    bailed: bool,
    /// Test lines and plans read, at any depth.
    saw_tap: bool,
    pending_bytes: usize,
    node: NodeCounts,
    /// Reading `prove -v`'s output.
    prove: Option<Prove>,
    /// Failures handed on (for prove's `Result: FAIL`).
    failures: u64,
}

impl<'s, 'l> Reader<'s, 'l> {
    fn new(sink: &'s mut Collector<'l>) -> Self {
        Reader {
            sink,
            number: 0,
            blocks: vec![Block::top(None)],
            announced: Vec::new(),
            current: None,
            yaml: None,
            started: false,
            trailing_plan: false,
            bailed: false,
            saw_tap: false,
            pending_bytes: 0,
            node: NodeCounts::default(),
            prove: None,
            failures: 0,
        }
    }

    /// Reads line `self.number`, `raw` (without its line end; `cut` when it was longer
    /// than [`MAX_LINE`]).
    fn line(&mut self, raw: &str, cut: bool) -> Result<Flow, ReadError> {
        if self.pending_bytes > MAX_PENDING_BYTES {
            return Err(self.error(format!(
                "subtests without a `# Subtest:` line hold more than {} MiB of tests before their names come",
                MAX_PENDING_BYTES / (1024 * 1024)
            )));
        }
        let indent = raw.len() - raw.trim_start_matches(' ').len();
        let text = raw[indent..].trim_end();
        if self.yaml.is_some() {
            return self.yaml_line(raw, indent, text).map(|()| Flow::Go);
        }
        if text.is_empty() {
            return Ok(Flow::Go);
        }
        let first = !self.started;
        self.started = true;
        if first && indent == 0 && PROVE_FILE.is_match(text) && point(text).is_none() {
            self.prove = Some(Prove::default());
        }
        let summary = self.prove.as_ref().is_some_and(|p| p.summary);
        if self.prove.is_some() && (indent == 0 || summary) && self.prove_line(text) {
            return Ok(Flow::Go);
        }
        let depth = indent / 4;
        let aligned = indent.is_multiple_of(4);
        if let Some(version) = VERSION.captures(text) {
            let n: u32 = version[1].parse().unwrap_or(0);
            if !(12..=14).contains(&n) {
                return Err(self.error(format!(
                    "TAP version {n} is not one this reader knows (12, 13, 14)"
                )));
            }
            return Ok(Flow::Go);
        }
        if let Some(reason) = text.strip_prefix("Bail out!") {
            self.bail_out(depth, reason.trim());
            return Ok(Flow::Stop);
        }
        if aligned && let Some(plan) = PLAN.captures(text) {
            self.structural(depth, cut)?;
            let count: u64 = plan[1]
                .parse()
                .map_err(|_| self.error(format!("the plan `{}` is not a count", &plan[0])))?;
            self.plan(depth, count);
            return Ok(Flow::Go);
        }
        if aligned && let Some(parsed) = point(text) {
            self.structural(depth, cut)?;
            self.point(depth, parsed);
            return Ok(Flow::Go);
        }
        if let Some(comment) = text.strip_prefix('#') {
            self.comment(indent, depth, aligned, comment)?;
            return Ok(Flow::Go);
        }
        if text == "---"
            && let Some(point) = &self.current
            && point.yaml.is_none()
            && indent == 4 * point.depth + 2
        {
            self.yaml = Some(Yaml {
                indent,
                opened: self.number,
                text: String::new(),
            });
        }
        // Anything else (a pragma, a program's own output) is not TAP's.
        Ok(Flow::Go)
    }

    fn error(&self, message: String) -> ReadError {
        ReadError::at_line(message, self.number)
    }

    /// Before a plan or a test line: within bounds, and the test line before it done.
    fn structural(&mut self, depth: usize, cut: bool) -> Result<(), ReadError> {
        if cut {
            return Err(self.error(format!(
                "a test line longer than {} MiB",
                MAX_LINE / (1024 * 1024)
            )));
        }
        if depth > MAX_DEPTH {
            return Err(self.error(format!("subtests nested deeper than {MAX_DEPTH} levels")));
        }
        self.finish_point();
        Ok(())
    }

    fn yaml_line(&mut self, raw: &str, indent: usize, text: &str) -> Result<(), ReadError> {
        let Some(yaml) = &mut self.yaml else {
            return Ok(());
        };
        if text == "..." && indent == yaml.indent {
            let yaml = self.yaml.take().map(|y| y.text);
            if let Some(point) = &mut self.current {
                point.yaml = yaml;
            }
            return Ok(());
        }
        if !text.is_empty() && indent < yaml.indent {
            return Err(ReadError::at_line(
                format!(
                    "the YAML block opened at line {} ends without its `...`",
                    yaml.opened
                ),
                self.number,
            ));
        }
        capture(&mut yaml.text, raw.get(yaml.indent..).unwrap_or(""));
        capture(&mut yaml.text, "\n");
        Ok(())
    }

    fn comment(
        &mut self,
        indent: usize,
        depth: usize,
        aligned: bool,
        comment: &str,
    ) -> Result<(), ReadError> {
        let body = comment.trim();
        if let Some(name) = body
            .strip_prefix("Subtest")
            .filter(|rest| rest.is_empty() || rest.starts_with(':'))
        {
            if !aligned {
                return Ok(());
            }
            if depth > MAX_DEPTH {
                return Err(self.error(format!("subtests nested deeper than {MAX_DEPTH} levels")));
            }
            self.finish_point();
            let name = name.trim_start_matches(':').trim();
            self.announced.truncate(depth);
            self.announced.resize(depth + 1, None);
            self.announced[depth] = (!name.is_empty()).then(|| bounded(name, MAX_SEGMENT_BYTES));
            return Ok(());
        }
        if indent == 0
            && self.blocks.len() == 1
            && self.trailing_plan
            && let Some(count) = NODE_COUNT.captures(&format!("#{comment}"))
        {
            let n = count[2].parse().ok();
            let slot = match &count[1] {
                "tests" => &mut self.node.tests,
                "pass" => &mut self.node.pass,
                "fail" => &mut self.node.fail,
                "cancelled" => &mut self.node.cancelled,
                _ => return Ok(()),
            };
            if slot.is_none() {
                *slot = n;
            }
            return Ok(());
        }
        // What a test said after its line (Test::More's `#   Failed test …`, Bats's
        // `# (in test file …)`) is its diagnostics.
        if let Some(point) = &mut self.current
            && indent >= 4 * point.depth
        {
            let said = comment.strip_prefix(' ').unwrap_or(comment);
            capture(&mut point.comments, said);
            capture(&mut point.comments, "\n");
        }
        Ok(())
    }

    fn plan(&mut self, depth: usize, count: u64) {
        self.saw_tap = true;
        self.open_to(depth);
        self.close_below(depth, false);
        let block = &mut self.blocks[depth];
        if block.plan.is_some() {
            self.add(
                depth,
                Case::error(
                    "(the plan)",
                    format!("a second plan `1..{count}` at line {}", self.number),
                ),
            );
            return;
        }
        block.plan = Some((count, self.number));
        if depth == 0 && block.points > 0 {
            self.trailing_plan = true;
        }
    }

    fn point(&mut self, depth: usize, parsed: Parsed) {
        self.saw_tap = true;
        // Deeper subtests that never got their own test line did not end.
        self.close_below(depth + 1, false);
        let mut children = None;
        if self.blocks.len() == depth + 2 {
            let name = if parsed.name.is_empty() {
                "(unnamed subtest)"
            } else {
                &parsed.name
            };
            children = Some(self.close_block(Some(name)));
        }
        self.open_to(depth);
        if depth == 0 {
            self.trailing_plan = false;
        }
        let block = &mut self.blocks[depth];
        block.points += 1;
        let expected = block.points;
        if let Some(number) = parsed.number
            && number != expected
            && !block.misnumbered
        {
            block.misnumbered = true;
            let message = format!(
                "test {number} at line {} comes where test {expected} should: tests out of sequence",
                self.number
            );
            self.add(depth, Case::error("(the numbering)", message));
        }
        self.announced.truncate(depth);
        let name = if parsed.name.is_empty() {
            format!("test {}", parsed.number.unwrap_or(expected))
        } else {
            parsed.name
        };
        self.current = Some(Point {
            depth,
            ok: parsed.ok,
            directive: parsed.directive,
            name,
            children,
            duration_ms: parsed.duration_ms,
            yaml: None,
            comments: String::new(),
        });
    }

    /// The test line read last, with its YAML and comments: handed on.
    fn finish_point(&mut self) {
        let Some(point) = self.current.take() else {
            return;
        };
        let said = Said::read(point.yaml.as_deref(), &point.comments);
        let outcome = match (point.directive, point.ok) {
            (Some(Directive::Skip), _) => TestOutcome::Skipped,
            // An expected failure is not a failure; a TODO that passes passed.
            (Some(Directive::Todo), false) => TestOutcome::Skipped,
            (_, true) => TestOutcome::Passed,
            (None, false) => TestOutcome::Failed,
        };
        if !said.suite {
            self.node.shown_tests += 1;
            if outcome == TestOutcome::Failed {
                self.node.shown_failing += 1;
            }
        }
        // A parent (or a `describe` block, even an empty one) sums up its subtests:
        // a test only for a failure of its own.
        let counted = match (point.children, said.suite) {
            (None, false) => true,
            (beneath, _) => {
                outcome == TestOutcome::Failed
                    && (beneath != Some(true)
                        || said
                            .failure_type
                            .as_deref()
                            .is_some_and(|t| t != "subtestsFailed"))
            }
        };
        if !counted {
            return;
        }
        let failing = outcome == TestOutcome::Failed;
        self.add(
            point.depth,
            Case {
                path: Vec::new(),
                name: bounded(&point.name, MAX_SEGMENT_BYTES),
                outcome,
                duration_ms: said.duration_ms.or(point.duration_ms),
                message: if failing { said.message } else { String::new() },
                output: if failing { said.output } else { String::new() },
                file: said.file,
                line: said.line,
                outside: false,
            },
        );
    }

    fn bail_out(&mut self, depth: usize, reason: &str) {
        self.finish_point();
        let depth = depth.min(self.blocks.len() - 1);
        let message = if reason.is_empty() {
            "Bail out! (the run stopped)".to_owned()
        } else {
            format!("Bail out! {reason}")
        };
        self.add(depth, Case::error("(bail out)", message));
        self.bailed = true;
    }

    /// The top level's plan against its tests.
    fn check_plan(&mut self) {
        if self.bailed {
            return;
        }
        let top = &self.blocks[0];
        let message = match top.plan {
            None => "no plan `1..N`: the stream may have been cut short".to_owned(),
            Some((n, _)) if n != top.points => plan_mismatch(n, top.points),
            Some(_) => return,
        };
        self.add(0, Case::error("(the plan)", message));
    }

    fn finish(mut self) -> Result<(), ReadError> {
        if let Some(yaml) = &self.yaml {
            return Err(ReadError::at_line(
                "the YAML block opened here is never closed with `...`",
                yaml.opened,
            ));
        }
        if self.prove.is_some() {
            return self.finish_prove();
        }
        self.close_all();
        if !self.saw_tap && !self.bailed {
            return Err(ReadError::new(
                "not a TAP stream: no plan `1..N` and no test line",
            ));
        }
        self.check_plan();
        self.check_node_counts();
        Ok(())
    }

    /// node's closing counts against the test lines, counted as node counts them.
    fn check_node_counts(&mut self) {
        let node = &self.node;
        let (Some(tests), Some(_), Some(fail)) = (node.tests, node.pass, node.fail) else {
            return;
        };
        if self.bailed {
            return;
        }
        let failing = fail.saturating_add(node.cancelled.unwrap_or(0));
        let mut why = Vec::new();
        if tests != node.shown_tests {
            why.push(format!(
                "{tests} tests, the stream shows {}",
                node.shown_tests
            ));
        }
        if failing > node.shown_failing {
            why.push(format!(
                "{failing} failed, the stream shows {}",
                node.shown_failing
            ));
        }
        if !why.is_empty() {
            let message = format!("the closing counts say {}", why.join("; "));
            self.add(0, Case::error("(the summary)", message));
        }
    }
}

fn plan_mismatch(planned: u64, ran: u64) -> String {
    let cut = if ran < planned { " (cut short?)" } else { "" };
    format!("the plan is `1..{planned}`, but {ran} tests ran{cut}")
}
