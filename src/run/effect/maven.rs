//! Maven Surefire: the `Tests run: …` line after `Results:` (the per-class lines before
//! it would count every test twice).

use super::{Findings, Parser, num};

re!(
    MAVEN,
    r"^Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)\s*$"
);

#[derive(Default)]
pub(super) struct Maven {
    /// `Results:` was seen: the next `Tests run:` line is the total.
    results: bool,
}

impl Parser for Maven {
    fn triggers(&self) -> &'static [&'static str] {
        &["Results:"]
    }

    /// Its counts' line begins with them (behind Maven's level), as Jest's does.
    fn starts(&self) -> &'static [&'static str] {
        &["Tests run:"]
    }

    fn line(&mut self, line: &str, found: &mut Findings) -> bool {
        if line.starts_with("Results:") {
            self.results = true;
            return true;
        }
        if !line.starts_with("Tests run:") {
            return false;
        }
        if self.results
            && let Some(c) = MAVEN.captures(line)
        {
            let (run, failures, errors, skipped) = (num(&c, 1), num(&c, 2), num(&c, 3), num(&c, 4));
            found.add_total("surefire", run, failures + errors, skipped);
            self.results = false;
        }
        true
    }
}
