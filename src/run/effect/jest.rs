//! Jest: `Tests:       1 failed, 2 passed, 3 total`.

use super::{Findings, Parser, count_items, sum};

re!(JEST, r"^Tests:\s+(.*?),?\s*(\d+) total\s*$");

#[derive(Default)]
pub(super) struct Jest;

impl Parser for Jest {
    fn triggers(&self) -> &'static [&'static str] {
        &[]
    }

    /// Its line begins with its word: `Test` is in most lines of other runners' logs
    /// (`--- PASS: TestParse`), where a search for it anywhere would stop at each.
    fn starts(&self) -> &'static [&'static str] {
        &["Tests:"]
    }

    fn line(&mut self, line: &str, found: &mut Findings) -> bool {
        if !line.starts_with("Tests:") {
            return false;
        }
        let Some(c) = JEST.captures(line) else {
            return false;
        };
        let items = count_items(&c[1]);
        let (passed, failed) = (sum(&items, &["passed"]), sum(&items, &["failed"]));
        found.add("jest", passed, failed, sum(&items, &["skipped", "todo"]));
        true
    }
}
