//! Mocha: `  3 passing (12ms)`, `  1 failing`, `  2 pending`.

use super::{Findings, Parser, num};

re!(MOCHA, r"^\s*(\d+) (passing|failing|pending)\b");

#[derive(Default)]
pub(super) struct Mocha;

impl Parser for Mocha {
    fn triggers(&self) -> &'static [&'static str] {
        &["passing", "failing", "pending"]
    }

    fn line(&mut self, line: &str, found: &mut Findings) -> bool {
        if !(line.contains("passing") || line.contains("failing") || line.contains("pending")) {
            return false;
        }
        let Some(c) = MOCHA.captures(line) else {
            return false;
        };
        let n = num(&c, 1);
        match &c[2] {
            "passing" => found.add("mocha", n, 0, 0),
            "failing" => found.add("mocha", 0, n, 0),
            _ => found.add("mocha", 0, 0, n),
        }
        true
    }
}
