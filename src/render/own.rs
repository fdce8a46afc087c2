//! What the renderers write themselves for one report — its verdict lines and its strict
//! rows — so that the last pass ([`crate::untrusted::seal`]) can neutralise every other
//! claim in what was rendered, however the untrusted fields were put together.

use std::cell::OnceCell;
use std::collections::HashSet;

use crate::results::report::PairIndex;
use crate::results::{Report, Verdict};
use crate::untrusted::seal::{Own, seal};

/// The report's own lines.
struct OwnLines<'a> {
    report: &'a Report,
    lines: HashSet<String>,
    index: OnceCell<PairIndex<'a>>,
}

impl<'a> OwnLines<'a> {
    fn of(report: &'a Report) -> OwnLines<'a> {
        let tested = report.tested_list();
        let mut lines = HashSet::from([format!("Environments Tested: {tested}")]);
        if report.partial.is_none() {
            let claim = |word: &str| format!("All Required Environments: {word}");
            match report.verdict {
                Verdict::Verified => {
                    lines.insert(claim("VERIFIED"));
                    lines.insert(claim("CONFIRMED"));
                    lines.insert(format!("Environments Verified: {tested}"));
                }
                Verdict::NotVerified => {
                    lines.insert(claim("NOT VERIFIED"));
                }
                Verdict::Skipped => {
                    lines.insert(claim("NOT VERIFIED"));
                    lines.insert(claim("SKIPPED (skip: true; nothing verified)"));
                }
            }
        }
        OwnLines {
            report,
            lines,
            index: OnceCell::new(),
        }
    }
}

impl Own for OwnLines<'_> {
    fn line(&self, line: &str) -> bool {
        self.lines.contains(line)
    }

    fn row(&self, check: &str, environment: &str, exit: &str, result: &str) -> bool {
        self.index
            .get_or_init(|| self.report.index())
            .row(check, environment)
            .is_some_and(|row| row.exit_code.to_string() == exit && row.result.as_str() == result)
    }
}

/// `text`, rendered from `report`, with every claim and row that is not the report's
/// own neutralised.
pub(crate) fn sealed(report: &Report, text: String) -> String {
    let own = OwnLines::of(report);
    match seal(&text, &own) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(sealed) => sealed,
    }
}
