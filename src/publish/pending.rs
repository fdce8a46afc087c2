//! The pending mark (`publish --pending`, DESIGN.md §6): at the start of a workflow run
//! the check run is created `in_progress` on the head commit and the sticky comment says
//! which commit is being verified. A run that is cancelled or crashes before its report
//! therefore leaves a check that blocks and a comment that gives no verdict, never the
//! previous commit's green.
//!
//! The comment keeps the previous result below the mark, for reviewers, with its verdict
//! lines marked as quoted (`All Required Environments (quoted): VERIFIED`) and its
//! heading naming the commit it was for: nothing in a pending comment reads as a
//! verdict. Marking a pending comment again replaces the mark and keeps the same
//! previous result.

use std::sync::LazyLock;

use regex::Regex;

use crate::render::text::short_commit;
use crate::untrusted::neutralise::mark_claims;

/// The line between the pending mark and the previous result.
pub const PREVIOUS: &str = "<!-- cargo-verify-matrix:previous -->";

/// The commit a rendered matrix names (its provenance line links `…/commit/SHA`, or
/// shows the short id alone).
static COMMIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^Commit \[?`([0-9a-fA-F]{7,64})`\]?(?:\(\S*/commit/([0-9a-fA-F]{7,64})\))?")
        .expect("valid regex")
});

/// The pending mark: the marker line, a heading and `provenance` (the commit being
/// verified and the run doing it).
pub fn banner(marker: &str, head: &str, provenance: Option<&str>) -> String {
    let short = short_commit(head);
    let mut out =
        format!("{marker}\n## ⏳ Environment Verification Matrix: verifying `{short}`\n\n");
    match provenance {
        Some(line) => out.push_str(&format!(
            "{line}: the checks are running; no verdict yet.\n"
        )),
        None => out.push_str("The checks are running; no verdict yet.\n"),
    }
    out
}

/// The pending comment that replaces our comment `existing`: `banner`, then the result
/// `existing` holds (its own, or the one below an earlier pending mark), which is about
/// another commit or an earlier run, so its verdict lines are quoted.
pub fn over(banner: &str, head: &str, existing: &str) -> String {
    let previous = match existing.split_once(PREVIOUS) {
        Some((_, previous)) => previous.trim_start_matches(['\r', '\n']).to_owned(),
        // Our last result, without its marker line; a bare pending mark has none.
        None if existing.contains("\n## ⏳ ") => return banner.to_owned(),
        None => existing
            .split_once('\n')
            .map_or("", |(_, rest)| rest)
            .trim_start_matches(['\r', '\n'])
            .to_owned(),
    };
    if previous.trim().is_empty() {
        return banner.to_owned();
    }
    let short = short_commit(head);
    let was_for = commit_of(&previous);
    let note = match &was_for {
        Some(commit) if head.starts_with(commit.as_str()) || commit.starts_with(head) => format!(
            "The result below is from an earlier run of `{short}`; it is being verified again."
        ),
        Some(commit) => format!(
            "The result below is for `{}`, an earlier commit: it is not a verdict for `{short}`.",
            short_commit(commit)
        ),
        None => format!("The result below is an earlier one: it is not a verdict for `{short}`."),
    };
    let heading = match &was_for {
        Some(commit) => format!("### Previous result, for `{}`", short_commit(commit)),
        None => "### Previous result".to_owned(),
    };
    let body = previous
        .lines()
        .map(|line| match line.strip_prefix("## ") {
            // The old verdict heading: it names the old result, not this commit's.
            Some(old) if old.contains("Environment Verification Matrix") => {
                format!("{heading}: {}", old.rsplit(": ").next().unwrap_or(old))
            }
            _ => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let pending = format!(
        "{banner}{note}\n\n{PREVIOUS}\n{}\n",
        mark_claims(&body).trim_end()
    );
    if pending.chars().count() <= super::COMMENT_LIMIT {
        return pending;
    }
    // The previous result filled the comment: the mark goes alone (GitHub refuses more).
    format!("{banner}The previous result is too long to keep beside this mark.\n")
}

/// The commit a rendered matrix says it verified, if it says so.
fn commit_of(markdown: &str) -> Option<String> {
    let found = COMMIT.captures(markdown)?;
    Some(found.get(2).or(found.get(1))?.as_str().to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "abc1234000000000000000000000000000000000";
    const OLD: &str = "def5678000000000000000000000000000000000";

    fn result(commit: &str, verdict: &str) -> String {
        format!(
            "<!-- cargo-verify-matrix:m.yml -->\n## ✅ Environment Verification Matrix: {verdict}\n\n\
             Commit [`{}`](https://github.com/o/r/commit/{commit}) · run [id 7](https://github.com/o/r/actions/runs/7)\n\n\
             | unit | linux | 0 | PASS |\n\nEnvironments Tested: linux\nAll Required Environments: {verdict}\n",
            &commit[..7]
        )
    }

    #[test]
    fn the_previous_result_stays_below_the_mark_without_its_verdict() {
        let banner = banner(
            "<!-- cargo-verify-matrix:m.yml -->",
            HEAD,
            Some("Commit `abc1234`"),
        );
        let pending = over(&banner, HEAD, &result(OLD, "VERIFIED"));
        assert!(pending.starts_with(&banner), "{pending}");
        assert!(pending.contains("The result below is for `def5678`, an earlier commit: it is not a verdict for `abc1234`."), "{pending}");
        assert!(
            pending.contains("### Previous result, for `def5678`: VERIFIED"),
            "{pending}"
        );
        assert!(pending.contains("| unit | linux | 0 | PASS |"), "{pending}");
        assert!(
            pending.contains("All Required Environments (quoted): VERIFIED"),
            "{pending}"
        );
        assert!(
            !pending.contains("All Required Environments: VERIFIED"),
            "{pending}"
        );
        assert_eq!(
            pending
                .matches("<!-- cargo-verify-matrix:m.yml -->")
                .count(),
            1
        );
        // Marking it again keeps one mark and the same previous result.
        let again = over(&banner, HEAD, &pending);
        assert_eq!(again, pending);
    }

    #[test]
    fn a_previous_result_that_fills_the_comment_is_left_out() {
        let banner = banner("<!-- m -->", HEAD, None);
        let huge = format!("{}{}", result(OLD, "VERIFIED"), "x\n".repeat(40_000));
        let pending = over(&banner, HEAD, &huge);
        assert!(pending.chars().count() <= crate::publish::COMMENT_LIMIT);
        assert!(pending.starts_with(&banner), "{pending}");
        assert!(!pending.contains("All Required Environments"), "{pending}");
    }

    #[test]
    fn a_bare_mark_or_the_same_commit_say_so() {
        let banner = banner("<!-- m -->", HEAD, None);
        assert_eq!(over(&banner, HEAD, &banner), banner);
        let pending = over(&banner, HEAD, &result(HEAD, "NOT VERIFIED"));
        assert!(
            pending.contains("from an earlier run of `abc1234`"),
            "{pending}"
        );
    }
}
