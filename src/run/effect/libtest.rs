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
        &["test result: "]
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
