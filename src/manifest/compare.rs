//! What a manifest changed against a trusted one (the base branch's): a pull request
//! can edit the manifest, so a change that makes the verdict easier to reach is a
//! weakening, listed and (unless allowed) not VERIFIED.
//!
//! Weakenings: a required check removed or made manual, a check made optional, an
//! environment dropped (from the manifest, or from a check that was required there), an
//! exit-code expectation that accepts a code the trusted one did not, `must-be-effective`
//! turned off, `min-tests` lowered or removed, a check's `reports` removed,
//! `tests-may-drop` raised, `fail-on-flaky` turned off, `fail-on: new`, and `skip: true`. Other changes (a check added, a command or timeout
//! changed, an expectation tightened) are listed for reviewers and never block.

use serde::{Deserialize, Serialize};

use super::model::{Check, CheckKind, ExpectExit, Manifest};

/// One difference between a trusted manifest and another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestChange {
    /// The check it is about, if any.
    pub check: Option<String>,
    /// What changed, for people.
    pub change: String,
    /// Whether it makes the verdict easier to reach.
    pub weakens: bool,
}

/// The changes `changed` makes to `trusted`, weakenings first, each list in manifest
/// order.
pub fn changes(trusted: &Manifest, changed: &Manifest) -> Vec<ManifestChange> {
    changes_with(trusted, changed, false)
}

/// The changes as the coding-agent gate judges them: besides [`changes`]' weakenings,
/// any change to what a required check runs (its command, folder, shell or variables,
/// here or through its environments and defaults, or its report files) and any
/// narrowing of the manifest's `hook:` section is a weakening. An agent that appends
/// `|| true` to a failing command has not strengthened anything.
pub fn gate_changes(trusted: &Manifest, changed: &Manifest) -> Vec<ManifestChange> {
    let mut out = changes_with(trusted, changed, true);
    hook_changes(trusted, changed, &mut out);
    out.sort_by_key(|c| !c.weakens);
    out
}

fn changes_with(trusted: &Manifest, changed: &Manifest, strict: bool) -> Vec<ManifestChange> {
    let mut out = Vec::new();
    let mut note = |check: Option<&str>, change: String, weakens: bool| {
        out.push(ManifestChange {
            check: check.map(str::to_owned),
            change,
            weakens,
        });
    };
    if changed.fail_on == super::model::FailOn::New && trusted.fail_on != changed.fail_on {
        note(
            None,
            "`fail-on: new` was set: failures the base branch has too would not fail the run"
                .into(),
            true,
        );
    }
    if changed.skip && !trusted.skip {
        note(
            None,
            "`skip: true` was set: nothing would be verified".into(),
            true,
        );
    }
    for env in &trusted.environments {
        if changed.environment(env.name.as_str()).is_none() {
            note(
                None,
                format!("environment `{}` was removed", env.name),
                true,
            );
        }
    }
    for env in &changed.environments {
        if trusted.environment(env.name.as_str()).is_none() {
            note(None, format!("environment `{}` was added", env.name), false);
        }
    }
    for before in &trusted.checks {
        let id = before.id.as_str();
        let Some(after) = changed.checks.iter().find(|c| c.id == before.id) else {
            if !before.kind.is_manual() {
                note(
                    Some(id),
                    format!("check `{id}` was removed"),
                    before.required,
                );
            }
            continue;
        };
        check_changes(trusted, before, after, &mut note);
        if strict && before.required && !before.kind.is_manual() {
            runs_changes(trusted, changed, before, after, &mut note);
        }
    }
    for after in &changed.checks {
        if !trusted.checks.iter().any(|c| c.id == after.id) {
            let id = after.id.as_str();
            note(Some(id), format!("check `{id}` was added"), false);
        }
    }
    // Weakenings first: they are what a reviewer must see.
    out.sort_by_key(|c| !c.weakens);
    out
}

fn check_changes(
    trusted: &Manifest,
    before: &Check,
    after: &Check,
    note: &mut dyn FnMut(Option<&str>, String, bool),
) {
    let id = before.id.as_str();
    let automated = !before.kind.is_manual();
    if automated && after.kind.is_manual() {
        note(
            Some(id),
            format!("check `{id}` was made a manual item: it no longer runs"),
            before.required,
        );
        return;
    }
    if before.required && !after.required {
        note(Some(id), format!("check `{id}` was made optional"), true);
    }
    if before.required && automated {
        let dropped: Vec<&str> = trusted
            .environments
            .iter()
            .filter(|e| before.scope.includes(&e.name) && !after.scope.includes(&e.name))
            .map(|e| e.name.as_str())
            .collect();
        if !dropped.is_empty() {
            note(
                Some(id),
                format!(
                    "check `{id}` is no longer required in {}",
                    dropped.join(", ")
                ),
                true,
            );
        }
    }
    if before.expect != after.expect {
        let weakens = match (before.expect, after.expect) {
            // A single code that is still accepted is a tightening of `failure`.
            (ExpectExit::Failure, ExpectExit::Code(code)) => code == 0,
            _ => true,
        };
        note(
            Some(id),
            format!(
                "check `{id}`: exit code {} became {}",
                describe(before.expect),
                describe(after.expect)
            ),
            weakens,
        );
    }
    if before.must_be_effective && !after.must_be_effective {
        note(
            Some(id),
            format!("check `{id}`: `must-be-effective` was turned off"),
            true,
        );
    }
    if before.fail_on_flaky && !after.fail_on_flaky {
        note(
            Some(id),
            format!("check `{id}`: `fail-on-flaky` was turned off"),
            true,
        );
    }
    quarantine_changes(id, before, after, note);
    // The evidence of which and how many tests ran: dropping it hides a shrinking suite.
    match (before.min_tests, after.min_tests) {
        (Some(was), None) => note(
            Some(id),
            format!("check `{id}`: `min-tests: {was}` was removed"),
            true,
        ),
        (Some(was), Some(now)) if now < was => note(
            Some(id),
            format!("check `{id}`: `min-tests` went from {was} to {now}"),
            true,
        ),
        _ => {}
    }
    // How far the suite may shrink against a baseline (its default goes with
    // `must-be-effective`, whose turning off is named above).
    let effective_kept = !before.must_be_effective || after.must_be_effective;
    match (before.drop_allowed(), after.drop_allowed()) {
        (Some(was), None) if effective_kept => note(
            Some(id),
            format!("check `{id}`: the limit on dropped tests ({was}%) was removed"),
            true,
        ),
        (Some(was), Some(now)) if now > was => note(
            Some(id),
            format!("check `{id}`: `tests-may-drop` went from {was}% to {now}%"),
            true,
        ),
        _ => {}
    }
    if !before.reports.is_empty() && after.reports.is_empty() {
        note(
            Some(id),
            format!("check `{id}`: its `reports` were removed"),
            true,
        );
    }
    let (was, now) = (before.kind.describe(), after.kind.describe());
    if was != now {
        note(
            Some(id),
            format!("check `{id}`: `{was}` became `{now}`"),
            false,
        );
    }
    // What a group demands: every item of an `all-of`, one of an `any-of`. An
    // `all-of` that became an `any-of`, an item removed from an `all-of` or added to an
    // `any-of` (one more way to pass) each ask less.
    match (&before.kind, &after.kind) {
        (CheckKind::AllOf(_), CheckKind::AnyOf(_)) => note(
            Some(id),
            format!("check `{id}`: `all-of` became `any-of`: one item passing is enough"),
            true,
        ),
        (CheckKind::AllOf(was), CheckKind::AllOf(now)) => {
            for item in was.iter().filter(|i| !now.iter().any(|n| n.id == i.id)) {
                note(
                    Some(id),
                    format!(
                        "check `{id}`: item `{}` was removed from its `all-of`",
                        item.id
                    ),
                    true,
                );
            }
        }
        (CheckKind::AnyOf(was), CheckKind::AnyOf(now)) => {
            for item in now.iter().filter(|i| !was.iter().any(|w| w.id == i.id)) {
                note(
                    Some(id),
                    format!(
                        "check `{id}`: item `{}` was added to its `any-of`: one more way to pass",
                        item.id
                    ),
                    true,
                );
            }
        }
        _ => {}
    }
    // A group's items are judged as checks are: each kept item's changes, under the
    // group's name.
    if let (
        CheckKind::AllOf(was) | CheckKind::AnyOf(was),
        CheckKind::AllOf(now) | CheckKind::AnyOf(now),
    ) = (&before.kind, &after.kind)
    {
        for item in was {
            if let Some(changed) = now.iter().find(|i| i.id == item.id) {
                check_changes(trusted, item, changed, &mut |_, text, weakens| {
                    note(Some(id), format!("{text} (an item of `{id}`)"), weakens)
                });
            }
        }
    }
}

/// Tests held back that were not, or for longer: each a weakening (a failure that no
/// longer counts); an entry lifted is named, and tightens.
fn quarantine_changes(
    id: &str,
    before: &Check,
    after: &Check,
    note: &mut dyn FnMut(Option<&str>, String, bool),
) {
    for entry in &after.quarantine {
        match before.quarantine.iter().find(|b| b.test == entry.test) {
            None => note(
                Some(id),
                format!(
                    "check `{id}`: `{}` was quarantined until {} ({})",
                    entry.test, entry.until, entry.reason
                ),
                true,
            ),
            Some(was) if entry.until > was.until => note(
                Some(id),
                format!(
                    "check `{id}`: the quarantine of `{}` was extended from {} to {}",
                    entry.test, was.until, entry.until
                ),
                true,
            ),
            Some(_) => {}
        }
    }
    for entry in &before.quarantine {
        if !after.quarantine.iter().any(|a| a.test == entry.test) {
            note(
                Some(id),
                format!("check `{id}`: `{}` left quarantine", entry.test),
                false,
            );
        }
    }
}

/// What else a required check runs differently, besides its command (which
/// [`check_changes`] names): its folder, report files, and in each environment it is
/// required in, its shell and variables.
fn runs_changes(
    trusted: &Manifest,
    changed: &Manifest,
    before: &Check,
    after: &Check,
    note: &mut impl FnMut(Option<&str>, String, bool),
) {
    let id = before.id.as_str();
    let mut what = Vec::new();
    if before.kind.describe() != after.kind.describe() || before.kind.key() != after.kind.key() {
        what.push("its command".to_owned());
    }
    if before.cwd != after.cwd {
        what.push(format!("its folder (`{}` → `{}`)", before.cwd, after.cwd));
    }
    if before.reports != after.reports && !after.reports.is_empty() {
        what.push("its report files".to_owned());
    }
    for env in &trusted.environments {
        let Some(env_after) = changed.environment(env.name.as_str()) else {
            continue;
        };
        if !before.scope.includes(&env.name) || !after.scope.includes(&env.name) {
            continue;
        }
        if trusted.shell_for(before, env) != changed.shell_for(after, env_after) {
            what.push(format!("its shell in {}", env.name));
        }
        let (vars_before, vars_after) = (
            trusted.env_for(before, env),
            changed.env_for(after, env_after),
        );
        if vars_before != vars_after {
            let names: Vec<&str> = vars_before
                .keys()
                .chain(vars_after.keys())
                .filter(|k| vars_before.get(*k) != vars_after.get(*k))
                .map(String::as_str)
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            what.push(format!(
                "its variables in {} ({})",
                env.name,
                names.join(", ")
            ));
        }
    }
    if !what.is_empty() {
        note(
            Some(id),
            format!(
                "required check `{id}` runs differently: {}",
                what.join("; ")
            ),
            true,
        );
    }
}

/// The manifest's `hook:` section narrowed: fewer checks or other environments for the
/// gate, or fewer blocks before a stop goes through.
fn hook_changes(trusted: &Manifest, changed: &Manifest, out: &mut Vec<ManifestChange>) {
    let (was, now) = (&trusted.hook, &changed.hook);
    let mut note = |change: String| {
        out.push(ManifestChange {
            check: None,
            change,
            weakens: true,
        })
    };
    let ids = |list: &[super::model::CheckId]| {
        list.iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let narrowed_checks = match (was.checks.is_empty(), now.checks.is_empty()) {
        (true, false) => true,
        (false, false) => was.checks.iter().any(|c| !now.checks.contains(c)),
        _ => false,
    };
    if narrowed_checks {
        let from = if was.checks.is_empty() {
            "every check".to_owned()
        } else {
            ids(&was.checks)
        };
        note(format!(
            "`hook.checks` went from {from} to {}",
            ids(&now.checks)
        ));
    }
    if was.environments != now.environments {
        let names = |list: &[super::model::EnvName]| {
            if list.is_empty() {
                "as `run` chooses".to_owned()
            } else {
                list.iter()
                    .map(|e| e.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        note(format!(
            "`hook.environments` went from {} to {}",
            names(&was.environments),
            names(&now.environments)
        ));
    }
    if now.max_blocks < was.max_blocks {
        note(format!(
            "`hook.max-blocks` went from {} to {}",
            was.max_blocks, now.max_blocks
        ));
    }
}

fn describe(expect: ExpectExit) -> String {
    match expect {
        ExpectExit::Code(code) => code.to_string(),
        ExpectExit::Failure => "`failure` (any non-zero)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::manifest::from_yaml_text;

    const BASE: &str = "version: 1
environments: [{ name: linux }, { name: macos }]
checks:
  - { id: unit, test: cargo test }
  - { id: lint, run: cargo clippy, environment: linux }
  - { id: audit, run: cargo audit, expect: failure }
  - { id: docs, run: cargo doc, required: false }
";

    fn manifest(text: &str) -> Manifest {
        from_yaml_text(Path::new("verify-matrix.yml"), text).unwrap()
    }

    fn described(text: &str) -> Vec<(String, bool)> {
        changes(&manifest(BASE), &manifest(text))
            .into_iter()
            .map(|c| (c.change, c.weakens))
            .collect()
    }

    #[test]
    fn the_same_manifest_changes_nothing() {
        assert_eq!(described(BASE), vec![]);
    }

    #[test]
    fn every_weakening_is_named() {
        let weakened = "version: 1
skip: true
environments: [{ name: linux }]
checks:
  - { id: unit, run: cargo test, exit-code: 1 }
  - { id: lint, run: cargo clippy, required: false, environment: linux }
  - { id: audit, run: cargo audit }
  - { id: extra, run: 'true' }
";
        assert_eq!(
            described(weakened),
            vec![
                (
                    "`skip: true` was set: nothing would be verified".into(),
                    true
                ),
                ("environment `macos` was removed".into(), true),
                ("check `unit`: exit code 0 became 1".into(), true),
                (
                    "check `unit`: `must-be-effective` was turned off".into(),
                    true
                ),
                ("check `lint` was made optional".into(), true),
                (
                    "check `audit`: exit code `failure` (any non-zero) became 0".into(),
                    true
                ),
                ("check `docs` was removed".into(), false),
                ("check `extra` was added".into(), false),
            ]
        );
        let narrowed = BASE.replace(
            "{ id: unit, test: cargo test }",
            "{ id: unit, test: cargo nextest run, environment: linux }",
        );
        assert_eq!(
            described(&narrowed),
            vec![
                ("check `unit` is no longer required in macos".into(), true),
                (
                    "check `unit`: `cargo test` became `cargo nextest run`".into(),
                    false
                ),
            ]
        );
        let with_tests = BASE.replace(
            "{ id: unit, test: cargo test }",
            "{ id: unit, test: cargo test, reports: junit.xml, min-tests: 100 }",
        );
        let compare = |before: &str, after: &str| -> Vec<(String, bool)> {
            changes(&manifest(before), &manifest(after))
                .into_iter()
                .map(|c| (c.change, c.weakens))
                .collect()
        };
        assert_eq!(
            compare(&with_tests, BASE),
            vec![
                ("check `unit`: `min-tests: 100` was removed".into(), true),
                ("check `unit`: its `reports` were removed".into(), true),
            ]
        );
        assert_eq!(
            compare(
                &with_tests,
                &with_tests.replace("min-tests: 100", "min-tests: 10")
            ),
            vec![("check `unit`: `min-tests` went from 100 to 10".into(), true)]
        );
        assert_eq!(compare(BASE, &with_tests), vec![]);
        assert_eq!(
            compare(
                BASE,
                &BASE.replace(
                    "test: cargo test }",
                    "test: cargo test, tests-may-drop: 10% }"
                )
            ),
            vec![(
                "check `unit`: `tests-may-drop` went from 0% to 10%".into(),
                true
            )]
        );
        // Failing on flaky tests is a strictness a pull request may add, not remove.
        let strict = BASE.replace(
            "test: cargo test }",
            "test: cargo test, fail-on-flaky: true }",
        );
        assert_eq!(compare(BASE, &strict), vec![]);
        assert_eq!(
            compare(&strict, BASE),
            vec![("check `unit`: `fail-on-flaky` was turned off".into(), true)]
        );
        // What a group demands.
        let group = |kind: &str, items: &[&str]| -> String {
            let items: Vec<String> = items
                .iter()
                .map(|i| format!("      - {{ item: {i}, file: {i}.md }}\n"))
                .collect();
            format!(
                "version: 1\nenvironments: [{{ name: linux }}]\nchecks:\n  - id: docs\n    {kind}:\n{}",
                items.concat()
            )
        };
        let all = group("all-of", &["readme", "guide"]);
        assert_eq!(
            compare(&all, &group("all-of", &["readme"])),
            vec![
                (
                    "check `docs`: item `guide` was removed from its `all-of`".into(),
                    true
                ),
                (
                    "check `docs`: `readme, guide` became `readme`".into(),
                    false
                ),
            ]
        );
        assert_eq!(
            compare(&all, &group("any-of", &["readme", "guide"])),
            vec![(
                "check `docs`: `all-of` became `any-of`: one item passing is enough".into(),
                true
            )]
        );
        let any = group("any-of", &["readme"]);
        assert_eq!(
            compare(&any, &group("any-of", &["readme", "guide"])),
            vec![
                (
                    "check `docs`: item `guide` was added to its `any-of`: one more way to pass"
                        .into(),
                    true
                ),
                (
                    "check `docs`: `readme` became `readme, guide`".into(),
                    false
                ),
            ]
        );
        // Asking more: an item added to an `all-of`, removed from an `any-of`, an
        // `any-of` made an `all-of`.
        for (before, after) in [
            (group("all-of", &["readme"]), all.clone()),
            (group("any-of", &["readme", "guide"]), any.clone()),
            (group("any-of", &["readme", "guide"]), all.clone()),
        ] {
            assert!(
                compare(&before, &after).iter().all(|(_, weakens)| !weakens),
                "{after}"
            );
        }
        let tightened = BASE.replace("expect: failure", "exit-code: 2");
        assert_eq!(
            described(&tightened),
            vec![(
                "check `audit`: exit code `failure` (any non-zero) became 2".into(),
                false
            )]
        );
    }
}
