//! pytest: the closing `==== 3 passed, 1 skipped in 0.12s ====` line.
//!
//! Counted as pytest's own JUnit report counts the same run: `passed` and `xpassed`
//! (a non-strict unexpected pass) passed; `failed` and `error(s)` failed; `skipped` and
//! `xfailed` (an expected failure, a `<skipped type="pytest.xfail">` in the report)
//! skipped. `deselected` tests were never run nor reported, and `rerun` and `warnings`
//! are not tests: none of them is counted. A line of counts with a word pytest does not
//! print (`3 passing in 1s`) is not pytest's.

use super::{Findings, Parser, count_items, sum};

re!(
    PYTEST,
    r"^=*\s*((?:\d+ [a-z]+(?:, )?)+) in [\d.]+s(?: \([^)]*\))?\s*=*\s*$"
);

/// The words of pytest's counts: a summary with only `warnings` ran no test.
const WORDS: &[&str] = &[
    "passed",
    "failed",
    "skipped",
    "deselected",
    "error",
    "errors",
    "xfailed",
    "xpassed",
    "warning",
    "warnings",
    "rerun",
];

#[derive(Default)]
pub(super) struct Pytest;

impl Parser for Pytest {
    fn triggers(&self) -> &'static [&'static str] {
        // Each of pytest's words holds one (`errors`, `warnings`, `xfailed` and
        // `xpassed` included).
        &[
            "passed",
            "failed",
            "skipped",
            "deselected",
            "error",
            "warning",
            "rerun",
        ]
    }

    fn line(&mut self, line: &str, found: &mut Findings) -> bool {
        if !line.contains(" in ") {
            return false;
        }
        let Some(c) = PYTEST.captures(line) else {
            return false;
        };
        let items = count_items(&c[1]);
        if !items.iter().all(|(_, word)| WORDS.contains(&word.as_str())) {
            return false;
        }
        found.add(
            "pytest",
            sum(&items, &["passed", "xpassed"]),
            sum(&items, &["failed", "error", "errors"]),
            sum(&items, &["skipped", "xfailed"]),
        );
        true
    }
}
