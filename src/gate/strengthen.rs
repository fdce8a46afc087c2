//! Which changes of the working copy's manifest the gate may judge by: an allowlist.
//!
//! The comparison reads both manifests as written (their keys), not as a list of known
//! weakenings: every key that differs is a change, and a change is used only when it is
//! **proven** to make the verdict harder to reach —
//!
//! - a check added whole (with no key of the trusted checks changed);
//! - an environment added whole, without a way in (`enter`);
//! - on a check: `required` turned on, `must-be-effective` turned on, `min-tests` raised
//!   or set, `timeout` raised, `retries` lowered, `tests-may-drop` lowered, its `name`
//!   (a label);
//! - in `hook:`: `max-blocks` raised, `checks` widened (every check, or more of them);
//! - in `policy:`: `deny` patterns added.
//!
//! Anything else — a key the comparison does not know, a group's items, an
//! environment's identity or way in, a split's `list:`, the defaults — is not proven,
//! and the gate blocks until a person allows the manifest.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::manifest::{Check, Manifest};

/// One difference between the trusted manifest and the working copy's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// What changed, for people.
    pub change: String,
    /// Whether it is proven to make the verdict harder to reach.
    pub proven: bool,
}

impl Change {
    fn proven(change: String) -> Change {
        Change {
            change,
            proven: true,
        }
    }

    fn unproven(change: String) -> Change {
        Change {
            change,
            proven: false,
        }
    }
}

/// The changes `changed` makes to `trusted`, the unproven first (each group in the
/// manifest's order).
pub fn compare(trusted: &Manifest, changed: &Manifest) -> Vec<Change> {
    let mut out = Vec::new();
    let (Some(before), Some(after)) = (trusted.content.as_object(), changed.content.as_object())
    else {
        if trusted.content != changed.content {
            out.push(Change::unproven("the manifest changed".to_owned()));
        }
        return out;
    };
    for key in keys(before, after) {
        let (was, now) = (before.get(key), after.get(key));
        if was == now {
            continue;
        }
        match key {
            "checks" => checks(trusted, changed, was, now, &mut out),
            "environments" => environments(was, now, &mut out),
            "hook" => hook(trusted, changed, was, now, &mut out),
            "policy" => policy(was, now, &mut out),
            other => out.push(Change::unproven(format!(
                "`{other}` {}",
                changed_how(was, now)
            ))),
        }
    }
    out.sort_by_key(|c| c.proven);
    out
}

/// The keys of two objects, the first's order first.
fn keys<'a>(a: &'a Map<String, Value>, b: &'a Map<String, Value>) -> Vec<&'a str> {
    let mut seen = BTreeSet::new();
    a.keys()
        .chain(b.keys())
        .map(String::as_str)
        .filter(|k| seen.insert(*k))
        .collect()
}

fn changed_how(was: Option<&Value>, now: Option<&Value>) -> &'static str {
    match (was, now) {
        (None, Some(_)) => "was added",
        (Some(_), None) => "was removed",
        _ => "changed",
    }
}

/// The entries of a list of objects, by the key that names them (`id`, `name`); an
/// entry without one is named by its place.
fn named<'a>(list: Option<&'a Value>, key: &str) -> Vec<(String, &'a Value)> {
    list.and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let name = item
                        .get(key)
                        .and_then(Value::as_str)
                        .map_or_else(|| format!("#{}", i + 1), str::to_owned);
                    (name, item)
                })
                .collect()
        })
        .unwrap_or_default()
}

fn checks(
    trusted: &Manifest,
    changed: &Manifest,
    was: Option<&Value>,
    now: Option<&Value>,
    out: &mut Vec<Change>,
) {
    let (before, after) = (named(was, "id"), named(now, "id"));
    let order_before: Vec<&str> = before.iter().map(|(id, _)| id.as_str()).collect();
    let order_after: Vec<&str> = after
        .iter()
        .map(|(id, _)| id.as_str())
        .filter(|id| order_before.contains(id))
        .collect();
    if order_before.len() == order_after.len() && order_before != order_after {
        // The order checks run in is what a check that leaves something behind for the
        // next one relies on.
        out.push(Change::unproven("the checks' order changed".to_owned()));
    }
    for (id, value) in &before {
        let Some((_, new)) = after.iter().find(|(other, _)| other == id) else {
            out.push(Change::unproven(format!("check `{id}` was removed")));
            continue;
        };
        if value == new {
            continue;
        }
        let typed = |m: &'_ Manifest| m.checks.iter().find(|c| c.id.as_str() == id).cloned();
        let (Some(old_check), Some(new_check)) = (typed(trusted), typed(changed)) else {
            out.push(Change::unproven(format!("check `{id}` changed")));
            continue;
        };
        check_keys(id, value, new, &old_check, &new_check, out);
    }
    for (id, _) in &after {
        if !before.iter().any(|(other, _)| other == id) {
            out.push(Change::proven(format!("check `{id}` was added")));
        }
    }
}

/// The keys of one check that differ, each proven or not by the typed values.
fn check_keys(
    id: &str,
    was: &Value,
    now: &Value,
    before: &Check,
    after: &Check,
    out: &mut Vec<Change>,
) {
    let (Some(was), Some(now)) = (was.as_object(), now.as_object()) else {
        out.push(Change::unproven(format!("check `{id}` changed")));
        return;
    };
    for key in keys(was, now) {
        if was.get(key) == now.get(key) {
            continue;
        }
        let proven = match key {
            "required" => after.required || !before.required,
            "must-be-effective" => after.must_be_effective || !before.must_be_effective,
            "min-tests" => after.min_tests.unwrap_or(0) >= before.min_tests.unwrap_or(0),
            "timeout" => after.timeout >= before.timeout,
            "retries" => after.retries <= before.retries,
            "tests-may-drop" => match (before.tests_may_drop, after.tests_may_drop) {
                (Some(was), Some(now)) => now <= was,
                (None, None) => true,
                _ => false,
            },
            "name" => true,
            _ => false,
        };
        let change = match key {
            "required" if before.required != after.required => format!(
                "check `{id}` was made {}",
                if after.required {
                    "required"
                } else {
                    "optional"
                }
            ),
            "must-be-effective" if before.must_be_effective != after.must_be_effective => {
                format!(
                    "check `{id}`: `must-be-effective` was turned {}",
                    if after.must_be_effective { "on" } else { "off" }
                )
            }
            _ => format!(
                "check `{id}`: `{key}` {}",
                described(was.get(key), now.get(key))
            ),
        };
        out.push(Change { change, proven });
    }
}

/// `was X, now Y` in short, for a key's two values.
fn described(was: Option<&Value>, now: Option<&Value>) -> String {
    let short = |v: &Value| {
        let text = v.to_string();
        crate::untrusted::cut(&text, 60)
    };
    match (was, now) {
        (None, Some(now)) => format!("was added ({})", short(now)),
        (Some(_), None) => "was removed".to_owned(),
        (Some(was), Some(now)) => format!("went from {} to {}", short(was), short(now)),
        (None, None) => "changed".to_owned(),
    }
}

fn environments(was: Option<&Value>, now: Option<&Value>, out: &mut Vec<Change>) {
    let (before, after) = (named(was, "name"), named(now, "name"));
    for (name, value) in &before {
        match after.iter().find(|(other, _)| other == name) {
            None => out.push(Change::unproven(format!(
                "environment `{name}` was removed"
            ))),
            Some((_, new)) if new != value => {
                let (Some(a), Some(b)) = (value.as_object(), new.as_object()) else {
                    out.push(Change::unproven(format!("environment `{name}` changed")));
                    continue;
                };
                for key in keys(a, b) {
                    if a.get(key) != b.get(key) {
                        out.push(Change::unproven(format!(
                            "environment `{name}`: `{key}` {}",
                            changed_how(a.get(key), b.get(key))
                        )));
                    }
                }
            }
            Some(_) => {}
        }
    }
    for (name, value) in &after {
        if before.iter().any(|(other, _)| other == name) {
            continue;
        }
        // A new way in runs commands of its own before any check: not proven.
        if value.get("enter").is_some() {
            out.push(Change::unproven(format!(
                "environment `{name}` was added with a way in (`enter`)"
            )));
        } else {
            out.push(Change::proven(format!("environment `{name}` was added")));
        }
    }
}

fn hook(
    trusted: &Manifest,
    changed: &Manifest,
    was: Option<&Value>,
    now: Option<&Value>,
    out: &mut Vec<Change>,
) {
    let empty = Map::new();
    let a = was.and_then(Value::as_object).unwrap_or(&empty);
    let b = now.and_then(Value::as_object).unwrap_or(&empty);
    if was.is_some_and(|v| !v.is_object()) || now.is_some_and(|v| !v.is_object()) {
        out.push(Change::unproven("`hook` changed".to_owned()));
        return;
    }
    let (before, after) = (&trusted.hook, &changed.hook);
    for key in keys(a, b) {
        if a.get(key) == b.get(key) {
            continue;
        }
        let proven = match key {
            "max-blocks" => after.max_blocks >= before.max_blocks,
            // Every check, or a list holding every check it held.
            "checks" => {
                after.checks.is_empty()
                    || (!before.checks.is_empty()
                        && before.checks.iter().all(|c| after.checks.contains(c)))
            }
            _ => false,
        };
        let change = format!("`hook.{key}` {}", described(a.get(key), b.get(key)));
        out.push(Change { change, proven });
    }
}

fn policy(was: Option<&Value>, now: Option<&Value>, out: &mut Vec<Change>) {
    let empty = Map::new();
    let a = was.and_then(Value::as_object).unwrap_or(&empty);
    let b = now.and_then(Value::as_object).unwrap_or(&empty);
    for key in keys(a, b) {
        if a.get(key) == b.get(key) {
            continue;
        }
        let proven = key == "deny" && {
            let list = |v: Option<&Value>| -> Vec<Value> {
                v.and_then(Value::as_array).cloned().unwrap_or_default()
            };
            let (old, new) = (list(a.get(key)), list(b.get(key)));
            b.get(key).is_some_and(Value::is_array) && old.iter().all(|p| new.contains(p))
        };
        let change = format!("`policy.{key}` {}", changed_how(a.get(key), b.get(key)));
        out.push(Change { change, proven });
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::manifest::from_yaml_text;

    const BASE: &str = "version: 1
environments: [{ name: linux }]
hook: { checks: [unit] }
checks:
  - { id: unit, run: 'exit 1', min-tests: 5, timeout: 1m }
  - id: all
    all-of:
      - { item: a, run: 'exit 1' }
      - { item: b, run: 'true' }
";

    fn compared(text: &str) -> Vec<(String, bool)> {
        let m = |t: &str| from_yaml_text(Path::new("verify-matrix.yml"), t).unwrap();
        compare(&m(BASE), &m(text))
            .into_iter()
            .map(|c| (c.change, c.proven))
            .collect()
    }

    #[test]
    fn the_same_manifest_changes_nothing() {
        assert_eq!(compared(BASE), vec![]);
    }

    #[test]
    fn only_proven_strengthenings_are_proven() {
        let strengthened =
            BASE.replace(
                "min-tests: 5, timeout: 1m",
                "min-tests: 9, timeout: 2m, name: Unit tests",
            )
            .replace(
                "hook: { checks: [unit] }",
                "hook: { checks: [unit, all], max-blocks: 5 }",
            ) + "  - { id: extra, run: 'true' }\n";
        let strengthened = strengthened.replace(
            "environments: [{ name: linux }]",
            "environments: [{ name: linux }, { name: more }]",
        );
        let changes = compared(&strengthened);
        assert!(changes.iter().all(|(_, proven)| *proven), "{changes:#?}");
        assert_eq!(changes.len(), 7, "{changes:#?}");
    }

    #[test]
    fn anything_the_comparison_does_not_prove_blocks() {
        for (from, to, said) in [
            (
                "{ item: a, run: 'exit 1' }",
                "{ item: a, run: 'true' }",
                "check `all`: `all-of` went from",
            ),
            (
                "{ item: a, run: 'exit 1' }",
                "{ item: a, run: 'exit 1', exit-code: 1 }",
                "check `all`: `all-of`",
            ),
            (
                "[{ name: linux }]",
                "[{ name: linux, runs-on: windows-latest }]",
                "environment `linux`: `runs-on` was added",
            ),
            (
                "[{ name: linux }]",
                "[{ name: linux, detect: { os: windows } }]",
                "environment `linux`: `detect` was added",
            ),
            (
                "[{ name: linux }]",
                "[{ name: linux, enter: { command: [env, 'BASH_ENV={repo}/evil.sh', '{repo}'] } }]",
                "environment `linux`: `enter` was added",
            ),
            (
                "[{ name: linux }]",
                "[{ name: linux }, { name: x, enter: { command: [bwrap, --bind, '{repo}', '{repo}'] } }]",
                "environment `x` was added with a way in",
            ),
            (
                "min-tests: 5",
                "min-tests: 4",
                "check `unit`: `min-tests` went from 5 to 4",
            ),
            (
                "timeout: 1m",
                "timeout: 30s",
                "check `unit`: `timeout` went from",
            ),
            (
                "{ checks: [unit] }",
                "{ checks: [all] }",
                "`hook.checks` went from",
            ),
            (
                "version: 1\n",
                "version: 1\ndefaults: { required: true }\n",
                "`defaults` was added",
            ),
            (
                "run: 'exit 1', min",
                "run: 'exit 1 || true', min",
                "check `unit`: `run` went from",
            ),
        ] {
            let text = BASE.replace(from, to);
            assert_ne!(text, BASE, "{from}");
            let changes = compared(&text);
            let found = changes.iter().find(|(c, _)| c.starts_with(said));
            assert!(matches!(found, Some((_, false))), "{said}: {changes:#?}");
        }
    }
}
