//! PHPUnit: `OK (3 tests, 5 assertions)`, or `Tests: 3, Assertions: 5, Failures: 1.`

use super::{Findings, Parser, num, sum};

re!(PHPUNIT_OK, r"^OK \((\d+) tests?, \d+ assertions?\)");
re!(PHPUNIT, r"^Tests: (\d+), Assertions: \d+(.*)$");

#[derive(Default)]
pub(super) struct Phpunit;

impl Parser for Phpunit {
    fn triggers(&self) -> &'static [&'static str] {
        &["OK ("]
    }

    /// Its counts' line begins with them, as Jest's does.
    fn starts(&self) -> &'static [&'static str] {
        &["Tests: "]
    }

    fn line(&mut self, line: &str, found: &mut Findings) -> bool {
        if line.starts_with("OK (") {
            if let Some(c) = PHPUNIT_OK.captures(line) {
                found.add("phpunit", num(&c, 1), 0, 0);
            }
            return true;
        }
        if !line.starts_with("Tests: ") {
            return false;
        }
        if let Some(c) = PHPUNIT.captures(line) {
            let total = num(&c, 1);
            let extra = items(&c[2]);
            let failed = sum(&extra, &["Failures", "Errors"]);
            let skipped = sum(&extra, &["Skipped", "Incomplete"]);
            found.add_total("phpunit", total, failed, skipped);
        }
        true
    }
}

/// `, Errors: 1, Failures: 1, Skipped: 1.` → [(1, "Errors"), …].
fn items(text: &str) -> Vec<(u64, String)> {
    text.trim_end_matches('.')
        .split(',')
        .filter_map(|part| {
            let (key, value) = part.split_once(':')?;
            Some((value.trim().parse().ok()?, key.trim().to_owned()))
        })
        .collect()
}
