//! ExUnit (`mix test`): `1 doctest, 4 tests, 1 failure, 1 skipped`.

use super::{Findings, Parser, count_items, sum};

re!(
    EXUNIT,
    r"^(?:\d+ (?:doctests?|propert(?:y|ies)), )*\d+ tests?, \d+ failures?"
);

#[derive(Default)]
pub(super) struct Exunit;

impl Parser for Exunit {
    fn triggers(&self) -> &'static [&'static str] {
        &["failure"]
    }

    fn line(&mut self, line: &str, found: &mut Findings) -> bool {
        if !(line.contains("failure") && EXUNIT.is_match(line)) {
            return false;
        }
        let items = count_items(line);
        let total = sum(
            &items,
            &[
                "doctest",
                "doctests",
                "test",
                "tests",
                "property",
                "properties",
            ],
        );
        let failed = sum(&items, &["failure", "failures", "invalid"]);
        let skipped = sum(&items, &["skipped", "excluded"]);
        found.add_total("exunit", total, failed, skipped);
        true
    }
}
