//! Vitest: `      Tests  1 failed | 2 passed (3)`, or `Tests  no tests`.

use super::{Findings, Parser, count_items, sum};

re!(VITEST, r"^\s*Tests\s+(.*\d+ [a-z]+.*)\s*\((\d+)\)\s*$");
re!(VITEST_NONE, r"^\s*Tests\s+no tests\s*$");

#[derive(Default)]
pub(super) struct Vitest;

impl Parser for Vitest {
    fn triggers(&self) -> &'static [&'static str] {
        // `Tests ` without its first two letters (its line is indented): `Test` is in
        // most lines of other runners' logs (`--- PASS: TestParse`), and the search,
        // which compares a word's first four bytes before the rest, would stop at each.
        &["sts "]
    }

    fn line(&mut self, line: &str, found: &mut Findings) -> bool {
        if line.contains("Tests ") && VITEST_NONE.is_match(line) {
            // vitest found test files but no test in them.
            found.add("vitest", 0, 0, 0);
            return true;
        }
        if !line.contains("Tests ") || line.contains("Test Files") {
            return false;
        }
        let Some(c) = VITEST.captures(line) else {
            return false;
        };
        let items = count_items(&c[1]);
        let (passed, failed) = (sum(&items, &["passed"]), sum(&items, &["failed"]));
        found.add("vitest", passed, failed, sum(&items, &["skipped", "todo"]));
        true
    }
}
