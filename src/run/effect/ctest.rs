//! CTest: `90% tests passed, 1 tests failed out of 10`, with the `***Skipped` lines
//! before it counted.

use super::{Findings, Parser, num};

re!(
    CTEST,
    r"^\d+% tests passed, (\d+) tests? failed out of (\d+)"
);

#[derive(Default)]
pub(super) struct Ctest {
    skipped: u64,
}

impl Parser for Ctest {
    fn triggers(&self) -> &'static [&'static str] {
        &["***Skipped", "% tests passed"]
    }

    fn line(&mut self, line: &str, found: &mut Findings) -> bool {
        if line.contains("***Skipped") {
            self.skipped += 1;
            return true;
        }
        if !line.contains("% tests passed") {
            return false;
        }
        let Some(c) = CTEST.captures(line) else {
            return false;
        };
        found.add_total("ctest", num(&c, 2), num(&c, 1), self.skipped);
        true
    }
}
