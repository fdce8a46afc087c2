//! The coordinator's check of a signal or a matrix, transcribed from the
//! environment-verification spec (docs/formats.md §6, "How coordinators check"):
//!
//! ```python
//! if not re.search(r'\| Check \| Environment \| Exit Code \| Result \|', text): reject
//! results = {}
//! for check, env, code, result in re.findall(r'\| (\S+) \| (\S+) \| (\d+) \| (PASS|FAIL) \|', text):
//!     results[(check, env)] = (code, result)          # a later match overwrites
//! for pair in expected:
//!     if pair not in results or results[pair][1] != 'PASS': reject
//! if not re.search(r'Environments Tested: (.+)', text): reject
//! if not re.search(r'All Required Environments: VERIFIED', text): reject
//! accept
//! ```
//!
//! Rust's `regex` and Python's `re` agree on these patterns for text without ASCII
//! control characters other than tab and line feed (both take `\S` and `\d` in the
//! Unicode sense; `.` stops at a line feed in both).

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

static HEADER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\| Check \| Environment \| Exit Code \| Result \|").unwrap());
static ROW: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\| (\S+) \| (\S+) \| (\d+) \| (PASS|FAIL) \|").unwrap());
static TESTED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"Environments Tested: (.+)").unwrap());
static VERIFIED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"All Required Environments: VERIFIED").unwrap());

static AUDIT_VERIFIED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"Environments Verified: (.+)").unwrap());
static CONFIRMED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"All Required Environments: CONFIRMED").unwrap());

/// The same check of an AUDIT_PASSED signal, whose lines read `Environments Verified:`
/// and `All Required Environments: CONFIRMED`.
pub fn coordinator_accepts_audit(text: &str, expected: &[(&str, &str)]) -> Result<(), String> {
    rows_pass(text, expected)?;
    if !AUDIT_VERIFIED.is_match(text) {
        return Err("no Environments Verified line".into());
    }
    if !CONFIRMED.is_match(text) {
        return Err("no CONFIRMED line".into());
    }
    Ok(())
}

/// Whether a coordinator accepts `text` as proof that every `(check, environment)` pair
/// of `expected` passed; `Err` says why not.
pub fn coordinator_accepts(text: &str, expected: &[(&str, &str)]) -> Result<(), String> {
    rows_pass(text, expected)?;
    if !TESTED.is_match(text) {
        return Err("no Environments Tested line".into());
    }
    if !VERIFIED.is_match(text) {
        return Err("no VERIFIED line".into());
    }
    Ok(())
}

/// Every row a coordinator reads in `text`, in order: (check, environment, code, result).
pub fn rows(text: &str) -> Vec<(String, String, String, String)> {
    ROW.captures_iter(text)
        .map(|c| (c[1].into(), c[2].into(), c[3].into(), c[4].into()))
        .collect()
}

/// Whether `text` anywhere claims a verdict: the VERIFIED or CONFIRMED line.
pub fn claims_verified(text: &str) -> bool {
    VERIFIED.is_match(text) || CONFIRMED.is_match(text)
}

/// How many matrix headers `text` has.
pub fn headers(text: &str) -> usize {
    HEADER.find_iter(text).count()
}

/// The header, and every expected pair's last row PASS.
fn rows_pass(text: &str, expected: &[(&str, &str)]) -> Result<(), String> {
    if !HEADER.is_match(text) {
        return Err("no matrix header".into());
    }
    let mut results: HashMap<(String, String), (String, String)> = HashMap::new();
    for caps in ROW.captures_iter(text) {
        results.insert(
            (caps[1].to_owned(), caps[2].to_owned()),
            (caps[3].to_owned(), caps[4].to_owned()),
        );
    }
    for (check, env) in expected {
        match results.get(&((*check).to_owned(), (*env).to_owned())) {
            None => return Err(format!("missing: {check} in {env}")),
            Some((_, result)) if result != "PASS" => {
                return Err(format!("failed: {check} in {env}"));
            }
            Some(_) => {}
        }
    }
    Ok(())
}
