//! RSpec: `5 examples, 1 failure, 2 pending`.

use super::{Findings, Parser, num};

re!(
    RSPEC,
    r"^(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?(?:, (\d+) errors? occurred outside of examples)?"
);

#[derive(Default)]
pub(super) struct Rspec;

impl Parser for Rspec {
    fn triggers(&self) -> &'static [&'static str] {
        &["example"]
    }

    fn line(&mut self, line: &str, found: &mut Findings) -> bool {
        if !line.contains("example") {
            return false;
        }
        if let Some(c) = RSPEC.captures(line) {
            let (total, failed) = (num(&c, 1), num(&c, 2));
            let (pending, outside) = (num(&c, 3), num(&c, 4));
            found.add(
                "rspec",
                total.saturating_sub(failed + pending),
                failed + outside,
                pending,
            );
        }
        true
    }
}
