//! pytest: the closing `==== 3 passed, 1 skipped in 0.12s ====` line.
//!
//! Counted as pytest's own JUnit report counts the same run: `passed` and `xpassed`
//! (a non-strict unexpected pass) passed; `failed` and `error(s)` failed; `skipped` and
//! `xfailed` (an expected failure, a `<skipped type="pytest.xfail">` in the report)
//! skipped. `deselected` tests were never run nor reported, and `rerun` and `warnings`
//! are not tests: none of them is counted.

use super::{Findings, Parser, count_items, sum};

re!(
    PYTEST,
    r"^=*\s*((?:\d+ [a-z]+(?:, )?)+) in [\d.]+s(?: \([^)]*\))?\s*=*\s*$"
);

#[derive(Default)]
pub(super) struct Pytest;

impl Parser for Pytest {
    fn triggers(&self) -> &'static [&'static str] {
        &[
            "passed",
            "failed",
            "skipped",
            "deselected",
            "error",
            "xfailed",
            "xpassed",
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
        found.add(
            "pytest",
            sum(&items, &["passed", "xpassed"]),
            sum(&items, &["failed", "error", "errors"]),
            sum(&items, &["skipped", "xfailed"]),
        );
        true
    }
}
