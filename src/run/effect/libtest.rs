//! Rust's built-in test harness (`cargo test`): one `test result:` line per test binary.

use super::{Findings, Parser, num};

re!(
    LIBTEST,
    r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; \d+ measured; \d+ filtered out"
);

#[derive(Default)]
pub(super) struct Libtest;

impl Parser for Libtest {
    fn triggers(&self) -> &'static [&'static str] {
        // `test result: ` without its first three letters: every other line of a
        // `cargo test` log begins `test `, and the search, which compares a word's
        // first four bytes before the rest, would stop at each of them.
        &["t result: "]
    }

    fn line(&mut self, line: &str, found: &mut Findings) -> bool {
        if !line.starts_with("test result: ") {
            return false;
        }
        if let Some(c) = LIBTEST.captures(line) {
            found.add("libtest", num(&c, 1), num(&c, 2), num(&c, 3));
        }
        true
    }
}
