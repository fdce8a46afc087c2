//! The levels of a stream (the stream itself, its subtests) and the tests found in
//! them, handed on to the collector with their path of names once it is known.

use super::{MAX_SEGMENT_BYTES, MAX_SUITE_BYTES, Reader, SEPARATOR, bounded, plan_mismatch};
use crate::results::TestOutcome;
use crate::run::reports::Found;

/// One level of a stream: the whole stream (or one of prove's files) at depth 0, a
/// subtest below.
#[derive(Default)]
pub(super) struct Block {
    /// Its name in its tests' path: a `# Subtest:` line's, else its parent's test
    /// line's once that comes (after the tests); prove's file at depth 0.
    pub(super) name: Option<String>,
    /// The test lines directly in it.
    pub(super) points: u64,
    /// Its plan `1..N` and the line it was on.
    pub(super) plan: Option<(u64, u64)>,
    /// Something in it or beneath failed (a test, an Error).
    pub(super) failed: bool,
    /// Its numbering was found out of sequence (said once).
    pub(super) misnumbered: bool,
    /// Tests waiting for a name in their path (this block's or an outer one's).
    pub(super) pending: Vec<Case>,
    /// The suite of the tests directly in it, when every level down to it has a name:
    /// joined once, not for each test.
    pub(super) prefix: Option<String>,
}

impl Block {
    /// The top level: the stream, or one of prove's files (`name`).
    pub(super) fn top(name: Option<String>) -> Block {
        Block {
            prefix: Some(name.clone().unwrap_or_default()),
            name,
            ..Block::default()
        }
    }
}

/// A test as it is handed on, its suite the path of names `path` below the block it
/// waits in (or the whole path, once handed on).
pub(super) struct Case {
    pub(super) path: Vec<String>,
    pub(super) name: String,
    pub(super) outcome: TestOutcome,
    pub(super) duration_ms: Option<u64>,
    pub(super) message: String,
    pub(super) output: String,
    pub(super) file: Option<String>,
    pub(super) line: Option<u32>,
    /// Not a test: what the stream says of itself (its plan, numbering, summary).
    pub(super) outside: bool,
}

impl Case {
    /// What the stream says of itself that its tests do not bear out: a failure.
    pub(super) fn error(name: &str, message: String) -> Case {
        Case {
            path: Vec::new(),
            name: name.to_owned(),
            outcome: TestOutcome::Error,
            duration_ms: None,
            message,
            output: String::new(),
            file: None,
            line: None,
            outside: true,
        }
    }

    /// Roughly the memory it holds.
    pub(super) fn size(&self) -> usize {
        64 + self.name.len()
            + self.message.len()
            + self.output.len()
            + self.path.iter().map(String::len).sum::<usize>()
    }
}

impl Reader<'_, '_> {
    /// Opens the levels down to `depth`, named by the `# Subtest:` lines that came.
    pub(super) fn open_to(&mut self, depth: usize) {
        while self.blocks.len() <= depth {
            let level = self.blocks.len();
            // Node and Test::More write the name at the parent's depth, older
            // Test::More at the subtest's own.
            let mut take = |at: usize| self.announced.get_mut(at).and_then(Option::take);
            let name = take(level - 1).or_else(|| take(level));
            let outer = self.blocks[level - 1].prefix.as_deref();
            let prefix = outer
                .zip(name.as_deref())
                .map(|(outer, name)| join(outer, name));
            self.blocks.push(Block {
                name,
                prefix,
                ..Block::default()
            });
        }
    }

    /// Closes the levels deeper than `depth`: they ended without their test line
    /// (said, unless `quiet`).
    pub(super) fn close_below(&mut self, depth: usize, quiet: bool) {
        while self.blocks.len() > depth + 1 {
            if !quiet {
                let level = self.blocks.len() - 1;
                let message = format!(
                    "the subtest never ended: no `ok` or `not ok` line for it (line {})",
                    self.number
                );
                self.add(level, Case::error("(the subtest)", message));
            }
            self.close_block(None);
        }
    }

    /// Closes the deepest level; `parent` is its test line's name when that ended it
    /// (then its plan is held against its tests). Whether something in it failed.
    pub(super) fn close_block(&mut self, parent: Option<&str>) -> bool {
        // The top level is never closed.
        if self.blocks.len() < 2 {
            return false;
        }
        if parent.is_some() && !self.bailed {
            let depth = self.blocks.len() - 1;
            let block = &self.blocks[depth];
            let message = match block.plan {
                None => Some("the subtest has no plan `1..N`".to_owned()),
                Some((n, _)) if n != block.points => Some(plan_mismatch(n, block.points)),
                _ => None,
            };
            if let Some(message) = message {
                self.add(depth, Case::error("(the plan)", message));
            }
        }
        let mut block = self.blocks.pop().unwrap_or_default();
        // The level it was in.
        let outer = self.blocks.len() - 1;
        let name = block
            .name
            .take()
            .or_else(|| parent.map(|n| bounded(n, MAX_SEGMENT_BYTES)))
            .unwrap_or_else(|| "(unnamed subtest)".to_owned());
        for mut case in std::mem::take(&mut block.pending) {
            self.pending_bytes = self.pending_bytes.saturating_sub(case.size());
            case.path.insert(0, name.clone());
            self.place(outer, case);
        }
        if block.failed {
            self.blocks[outer].failed = true;
        }
        block.failed
    }

    /// Closes every subtest level (the end of a stream or of one of prove's files).
    pub(super) fn close_all(&mut self) {
        self.finish_point();
        self.close_below(0, self.bailed);
    }

    /// A test found in the level at `depth`: handed on, or kept until its path is known.
    pub(super) fn add(&mut self, depth: usize, case: Case) {
        if case.outcome.is_failure() {
            self.blocks[depth].failed = true;
        }
        self.place(depth, case);
    }

    /// `case` in the level at `depth`: handed on when every level down to it has a
    /// name, else kept in the deepest level without one.
    pub(super) fn place(&mut self, mut depth: usize, mut case: Case) {
        while depth > 0 && self.blocks[depth].prefix.is_none() {
            match &self.blocks[depth].name {
                Some(name) => case.path.insert(0, name.clone()),
                None => {
                    self.pending_bytes += case.size();
                    self.blocks[depth].pending.push(case);
                    return;
                }
            }
            depth -= 1;
        }
        let mut suite = self.blocks[depth].prefix.clone().unwrap_or_default();
        for part in &case.path {
            suite = join(&suite, part);
        }
        self.emit(&suite, case);
    }

    /// `case` to the collector, in `suite`.
    pub(super) fn emit(&mut self, suite: &str, case: Case) {
        if case.outcome.is_failure() {
            self.failures += 1;
        }
        self.sink.add(Found {
            suite,
            name: &case.name,
            outcome: Some(case.outcome),
            duration_ms: case.duration_ms,
            message: &case.message,
            output: &case.output,
            file: case.file.as_deref(),
            line: case.line,
            package: None,
            outside: case.outside,
        });
    }
}

/// `outer › name`, at most [`MAX_SUITE_BYTES`].
fn join(outer: &str, name: &str) -> String {
    if outer.is_empty() {
        return bounded(name, MAX_SUITE_BYTES);
    }
    if outer.len() >= MAX_SUITE_BYTES {
        return outer.to_owned();
    }
    bounded(&format!("{outer}{SEPARATOR}{name}"), MAX_SUITE_BYTES)
}
