//! cargo-nextest: its closing `Summary [...] N tests run: …` line.

use super::{Findings, Parser, count_items, sum};

re!(NEXTEST, r"^\s*Summary \[[^\]]*\]\s+(\d+) tests? run: (.*)$");

#[derive(Default)]
pub(super) struct Nextest;

impl Parser for Nextest {
    fn triggers(&self) -> &'static [&'static str] {
        &["Summary ["]
    }

    fn line(&mut self, line: &str, found: &mut Findings) -> bool {
        if !line.contains("Summary [") {
            return false;
        }
        if let Some(c) = NEXTEST.captures(line) {
            let items = count_items(&c[2]);
            found.add(
                "nextest",
                sum(&items, &["passed"]),
                sum(&items, &["failed", "timed out"]),
                sum(&items, &["skipped"]),
            );
        }
        true
    }
}
