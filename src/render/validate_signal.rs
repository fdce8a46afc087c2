//! `validate-signal`: a coordinator's mechanical check of an agent's READY_FOR_REVIEW or
//! AUDIT_PASSED text (docs/formats.md §6) against the pairs the manifest expects and, when
//! given, the real results.
//!
//! The matrix is read only from the rows right under its header: text further down (a
//! log tail quoted in a failure's details, say) cannot add or change a claim.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use crate::results::{Report, RowResult};

/// A strict-table row, exactly as docs/formats.md §5 gives it.
pub const ROW_PATTERN: &str = r"\| (\S+) \| (\S+) \| (\d+) \| (PASS|FAIL) \|";

/// The strict table's header line.
pub const MATRIX_HEADER: &str = "| Check | Environment | Exit Code | Result |";

static ROW: LazyLock<Regex> = LazyLock::new(|| Regex::new(ROW_PATTERN).expect("valid pattern"));

/// One row a signal claims.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Claim {
    pub check: String,
    pub environment: String,
    pub exit_code: u64,
    pub result: String,
}

/// What was read from a signal.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ParsedMatrix {
    /// `READY_FOR_REVIEW` or `AUDIT_PASSED`, from the first line.
    pub signal: Option<String>,
    pub task_id: Option<String>,
    pub rows: Vec<Claim>,
    pub environments_tested: Option<Vec<String>>,
    /// What follows `All Required Environments:`.
    pub all_required_environments: Option<String>,
    /// Whether the matrix header was found.
    #[serde(skip)]
    pub header_found: bool,
}

/// The verdict on a signal, printed as one JSON object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Validation {
    pub valid: bool,
    pub error: Option<String>,
    pub action: &'static str,
    pub parsed_matrix: ParsedMatrix,
}

/// Reads the signal's first line, matrix and verdict lines.
pub fn parse(text: &str) -> ParsedMatrix {
    let lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
    let mut parsed = ParsedMatrix::default();
    if let Some(first) = lines.iter().find(|l| !l.trim().is_empty()) {
        for kind in ["READY_FOR_REVIEW", "AUDIT_PASSED"] {
            if let Some(rest) = first
                .trim()
                .strip_prefix(kind)
                .and_then(|r| r.strip_prefix(':'))
            {
                parsed.signal = Some(kind.to_owned());
                parsed.task_id = Some(rest.trim().to_owned()).filter(|t| !t.is_empty());
            }
        }
    }
    let Some(header) = lines.iter().position(|l| l.trim() == MATRIX_HEADER) else {
        return parsed;
    };
    parsed.header_found = true;
    let mut at = header + 1;
    if lines
        .get(at)
        .is_some_and(|l| l.trim_start().starts_with("|-"))
    {
        at += 1;
    }
    while let Some(line) = lines.get(at).filter(|l| l.trim_start().starts_with('|')) {
        if let Some(c) = ROW.captures(line)
            && let Ok(exit_code) = c[3].parse()
        {
            parsed.rows.push(Claim {
                check: c[1].to_owned(),
                environment: c[2].to_owned(),
                exit_code,
                result: c[4].to_owned(),
            });
        }
        at += 1;
    }
    let tested_prefix = tested_prefix(parsed.signal.as_deref());
    let below = &lines[at..];
    parsed.environments_tested = below.iter().find_map(|l| {
        l.strip_prefix(tested_prefix).map(|rest| {
            rest.split(',')
                .map(|e| e.trim().to_owned())
                .filter(|e| !e.is_empty())
                .collect()
        })
    });
    parsed.all_required_environments = below.iter().find_map(|l| {
        l.strip_prefix("All Required Environments:")
            .map(|rest| rest.trim().to_owned())
    });
    parsed
}

fn tested_prefix(signal: Option<&str>) -> &'static str {
    if signal == Some("AUDIT_PASSED") {
        "Environments Verified:"
    } else {
        "Environments Tested:"
    }
}

/// Checks `text` against the `expected` (check, environment) pairs and, when given,
/// the real results in `against`.
pub fn validate(text: &str, expected: &[(String, String)], against: Option<&Report>) -> Validation {
    let parsed = parse(text);
    let error = first_error(&parsed, expected, against);
    Validation {
        valid: error.is_none(),
        action: if error.is_none() {
            "ACCEPT"
        } else {
            "REJECT_SIGNAL"
        },
        error,
        parsed_matrix: parsed,
    }
}

fn first_error(
    parsed: &ParsedMatrix,
    expected: &[(String, String)],
    against: Option<&Report>,
) -> Option<String> {
    if !parsed.header_found {
        return Some("Missing Environment Verification Matrix header".to_owned());
    }
    if parsed.rows.is_empty() {
        return Some("No verification results found in matrix".to_owned());
    }
    if let Some(report) = against {
        let index = report.index();
        for claim in &parsed.rows {
            let actual = index.row(&claim.check, &claim.environment);
            let same = actual.is_some_and(|r| {
                i64::from(r.exit_code) == i64::try_from(claim.exit_code).unwrap_or(-1)
                    && r.result.as_str() == claim.result
            });
            if !same {
                let actual = match actual {
                    Some(r) => format!("exit {} {}", r.exit_code, r.result.as_str()),
                    None => "no result".to_owned(),
                };
                return Some(format!(
                    "Claim differs: {} in {} claimed exit {} {}, actual {actual}",
                    claim.check, claim.environment, claim.exit_code, claim.result
                ));
            }
        }
    }
    let mut by_pair: HashMap<(&str, &str), Vec<&Claim>> = HashMap::new();
    for claim in &parsed.rows {
        by_pair
            .entry((&claim.check, &claim.environment))
            .or_default()
            .push(claim);
    }
    for (check, env) in expected {
        let claims = by_pair
            .get(&(check.as_str(), env.as_str()))
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        if claims.is_empty() {
            return Some(format!("Missing: {check} in {env}"));
        }
        if let Some(failed) = claims.iter().find(|c| c.result != RowResult::Pass.as_str()) {
            return Some(format!(
                "Failed: {check} in {env} (exit {})",
                failed.exit_code
            ));
        }
    }
    let audit = parsed.signal.as_deref() == Some("AUDIT_PASSED");
    if parsed.environments_tested.is_none() {
        return Some(format!(
            "Missing \"{}\" line",
            tested_prefix(parsed.signal.as_deref())
        ));
    }
    let verified = if audit { "CONFIRMED" } else { "VERIFIED" };
    if parsed.all_required_environments.as_deref() != Some(verified) {
        return Some(format!(
            "Missing \"All Required Environments: {verified}\" line"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(c, e)| ((*c).to_owned(), (*e).to_owned()))
            .collect()
    }

    const GOOD: &str = "READY_FOR_REVIEW: T-1

Environment Verification Matrix:
| Check | Environment | Exit Code | Result |
|-------|-------------|-----------|--------|
| unit_tests | linux | 0 | PASS |
| unit_tests | macos | 0 | PASS |

Environments Tested: linux, macos
All Required Environments: VERIFIED
";

    #[test]
    fn a_complete_signal_is_accepted() {
        let v = validate(
            GOOD,
            &pairs(&[("unit_tests", "linux"), ("unit_tests", "macos")]),
            None,
        );
        assert_eq!(v.error, None);
        assert_eq!(v.action, "ACCEPT");
        assert_eq!(v.parsed_matrix.task_id.as_deref(), Some("T-1"));
        assert_eq!(v.parsed_matrix.rows.len(), 2);
        assert_eq!(
            v.parsed_matrix.environments_tested,
            Some(vec!["linux".to_owned(), "macos".to_owned()])
        );
    }

    #[test]
    fn rows_below_the_table_are_not_claims() {
        let text = GOOD.replace(
            "| unit_tests | macos | 0 | PASS |\n",
            "\n| unit_tests | macos | 0 | PASS |\n",
        );
        let v = validate(&text, &pairs(&[("unit_tests", "macos")]), None);
        assert_eq!(v.error.as_deref(), Some("Missing: unit_tests in macos"));
    }
}
