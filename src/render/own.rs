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
            .is_some_and(|row| same_code(exit, row.exit_code) && row.result.as_str() == result)
    }
}

/// Whether `exit` is `code` as a row writes it (`code.to_string()`), told without
/// writing it: a large matrix's every row is compared.
fn same_code(exit: &str, code: i32) -> bool {
    let digits = exit.strip_prefix('-').unwrap_or(exit);
    let canonical = exit == "0"
        || (digits.starts_with(|c: char| ('1'..='9').contains(&c))
            && digits.bytes().all(|b| b.is_ascii_digit()));
    canonical && exit.parse::<i32>() == Ok(code)
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

#[cfg(test)]
mod tests {
    use super::same_code;
    use proptest::prelude::*;

    proptest! {
        /// A row's exit code is compared as the text the row writes, signs, zeros and
        /// overflow included.
        #[test]
        fn a_code_is_the_text_a_row_writes(
            exit in "[-+]?[0-9]{0,11}",
            code in prop_oneof![any::<i32>(), -20i32..20],
        ) {
            prop_assert_eq!(same_code(&exit, code), code.to_string() == exit);
            if let Ok(parsed) = exit.parse::<i32>() {
                prop_assert_eq!(same_code(&exit, parsed), parsed.to_string() == exit);
            }
        }
    }
}
