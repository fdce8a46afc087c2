//! `node --test`: the TAP (`# pass 3`) or spec (`ℹ pass 3`) reporter's closing counts.

use super::{Findings, Parser, num};

re!(
    NODE,
    r"^(?:#|ℹ) (tests|pass|fail|cancelled|skipped|todo) (\d+)\s*$"
);

#[derive(Default)]
pub(super) struct NodeTest;

impl Parser for NodeTest {
    fn triggers(&self) -> &'static [&'static str] {
        // The counts' own words: `# ` alone is in too many lines (and too short to
        // search for quickly).
        &[
            "# tests ",
            "# pass ",
            "# fail ",
            "# cancelled ",
            "# skipped ",
            "# todo ",
            "ℹ tests ",
            "ℹ pass ",
            "ℹ fail ",
            "ℹ cancelled ",
            "ℹ skipped ",
            "ℹ todo ",
        ]
    }

    fn line(&mut self, line: &str, found: &mut Findings) -> bool {
        if !(line.starts_with("# ") || line.starts_with("ℹ ")) {
            return false;
        }
        let Some(c) = NODE.captures(line) else {
            return false;
        };
        let n = num(&c, 2);
        match &c[1] {
            "pass" => found.add("node:test", n, 0, 0),
            "fail" | "cancelled" => found.add("node:test", 0, n, 0),
            "skipped" | "todo" => found.add("node:test", 0, 0, n),
            // `tests` is the sum of the others.
            _ => found.add("node:test", 0, 0, 0),
        }
        true
    }
}
