//! The hub's `verification_steps` contract, read as a manifest: a task's steps become
//! checks of one environment (`local`), so they go through the same plan → run → results
//! pipeline; `render --format steps` writes the report the hub stores.
//!
//! ```json
//! {"task_id": "T-1", "verification_timeout_ms": 60000, "skip_verification": false,
//!  "verification_steps": [{"type": "test_passes", "target": "auto", "description": "tests"}]}
//! ```
//!
//! `file_exists` → `file:`, `test_passes` → `test:` (`auto` detects the runner),
//! `git_clean` → `git-clean:` (the target folder, `.` when empty), `command_succeeds` →
//! `run:`. The steps are `step-1`, `step-2`, … named by their description; the global
//! timeout (default 120,000 ms, as the hub's) is the run timeout; `skip_verification:
//! true` is `skip: true`. Other keys of the task (its title, its id) are left alone.

use serde_json::{Map, Value, json};

use super::diagnostic::Diagnostic;
use super::spans::{Spans, join_index, join_key};

/// The timeout of a task that gives none, in milliseconds (the hub's own default).
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;

/// The step types, in the order they are documented.
pub const STEP_TYPES: &[&str] = &[
    "file_exists",
    "test_passes",
    "git_clean",
    "command_succeeds",
];

/// The keys that make a document a task of the hub rather than a manifest.
const MARKERS: &[&str] = &[
    "verification_steps",
    "skip_verification",
    "verification_timeout_ms",
];

/// The name of the one environment the steps run in.
pub const ENVIRONMENT: &str = "local";

/// Whether `content` is a hub task (one of its verification keys, no `version`).
pub fn is_steps(content: &Value) -> bool {
    content.as_object().is_some_and(|map| {
        !map.contains_key("version") && MARKERS.iter().any(|k| map.contains_key(*k))
    })
}

/// The `task_id` of the task file at `path`, if it is one and names it.
pub fn task_id_in(path: &std::path::Path) -> Option<String> {
    let text = super::guard::read_text(path).ok()?;
    let content: Value = serde_yaml::from_str(super::guard::strip_bom(&text)).ok()?;
    if !is_steps(&content) {
        return None;
    }
    match content.get("task_id")? {
        Value::String(id) => Some(id.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The manifest of the task `content`; every problem with the task's own keys, located
/// in its text.
pub fn to_manifest(content: &Value, spans: &Spans) -> Result<Value, Vec<Diagnostic>> {
    let empty = Map::new();
    let map = content.as_object().unwrap_or(&empty);
    let mut problems = Vec::new();
    let mut error = |path: String, message: String| {
        let pos = spans.locate(&path);
        problems.push(Diagnostic::new(path, message, pos));
    };
    let skip = match map.get("skip_verification") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            error(
                "skip_verification".to_owned(),
                format!("`skip_verification` must be true or false, not {other}"),
            );
            false
        }
    };
    let timeout_ms = match map.get("verification_timeout_ms") {
        None | Some(Value::Null) => DEFAULT_TIMEOUT_MS,
        Some(value) => match value.as_u64().filter(|ms| *ms > 0) {
            Some(ms) => ms,
            None => {
                error(
                    "verification_timeout_ms".to_owned(),
                    format!(
                        "`verification_timeout_ms` must be a whole number of milliseconds above zero, not {value}"
                    ),
                );
                DEFAULT_TIMEOUT_MS
            }
        },
    };
    let steps = match map.get("verification_steps") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(steps)) => steps.as_slice(),
        Some(other) => {
            error(
                "verification_steps".to_owned(),
                format!("`verification_steps` must be a list of steps, not {other}"),
            );
            &[][..]
        }
    };
    let mut checks = Vec::new();
    for (index, step) in steps.iter().enumerate() {
        let at = join_index("verification_steps", index);
        let Some(step) = step.as_object() else {
            error(
                at,
                format!("a step must be a mapping with `type` and `target`, not {step}"),
            );
            continue;
        };
        let text = |key: &str| match step.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!("`{key}` must be a string, not {other}")),
        };
        let (kind, target, description) = match (text("type"), text("target"), text("description"))
        {
            (Ok(kind), Ok(target), Ok(description)) => (kind, target, description),
            (kind, target, description) => {
                for (key, result) in [
                    ("type", kind),
                    ("target", target),
                    ("description", description),
                ] {
                    if let Err(message) = result {
                        error(join_key(&at, key), message);
                    }
                }
                continue;
            }
        };
        for key in step.keys() {
            if !["type", "target", "description"].contains(&key.as_str()) {
                error(
                    join_key(&at, key),
                    format!("unknown key `{key}` in a step; expected type, target, description"),
                );
            }
        }
        let target = target.unwrap_or_default();
        let key = match kind.as_deref() {
            Some("file_exists") => "file",
            Some("test_passes") => "test",
            Some("git_clean") => "git-clean",
            Some("command_succeeds") => "run",
            Some(other) => {
                error(
                    join_key(&at, "type"),
                    format!(
                        "unknown step type `{other}`; expected one of: {}",
                        STEP_TYPES.join(", ")
                    ),
                );
                continue;
            }
            None => {
                error(at, "a step needs a `type`".to_owned());
                continue;
            }
        };
        let target = match key {
            "git-clean" if target.trim().is_empty() => ".".to_owned(),
            "test" if target.trim().is_empty() => "auto".to_owned(),
            _ if target.trim().is_empty() => {
                error(
                    join_key(&at, "target"),
                    format!("a `{}` step needs a `target`", kind.unwrap_or_default()),
                );
                continue;
            }
            _ => target,
        };
        // A path target is read inside the task's folder, as reports are: a task (from
        // the hub, not the repository) must not make the check look elsewhere.
        if matches!(key, "file" | "git-clean")
            && let Err(why) = inside_the_folder(&target)
        {
            error(join_key(&at, "target"), format!("`{target}`: {why}"));
            continue;
        }
        let mut check = Map::new();
        check.insert("id".to_owned(), json!(format!("step-{}", index + 1)));
        if let Some(description) = description.filter(|d| !d.trim().is_empty()) {
            check.insert("name".to_owned(), json!(description));
        }
        check.insert(key.to_owned(), json!(target));
        checks.push(Value::Object(check));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(json!({
        "version": 1,
        "environments": [{"name": ENVIRONMENT}],
        "run-timeout": format!("{timeout_ms}ms"),
        "skip": skip,
        "checks": checks,
    }))
}

/// Whether `target` names a place inside the task's folder: relative, without `..`.
fn inside_the_folder(target: &str) -> Result<(), &'static str> {
    let path = std::path::Path::new(target);
    if path.is_absolute() || target.starts_with(['/', '\\']) || target.get(1..2) == Some(":") {
        return Err("it is absolute; give a path relative to the task's folder");
    }
    if target.split(['/', '\\']).any(|part| part == "..") {
        return Err("`..` leaves the task's folder; a step's target is looked for inside it");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_is_told_from_a_manifest_by_its_keys() {
        assert!(is_steps(&json!({"verification_steps": []})));
        assert!(is_steps(
            &json!({"task_id": "t", "skip_verification": true})
        ));
        assert!(!is_steps(&json!({"version": 1, "verification_steps": []})));
        assert!(!is_steps(&json!({"version": 1, "checks": []})));
    }

    #[test]
    fn each_step_type_becomes_its_check_kind() {
        let task = json!({
            "task_id": "T-7",
            "verification_timeout_ms": 5000,
            "verification_steps": [
                {"type": "file_exists", "target": "dist/app.js", "description": "bundle"},
                {"type": "test_passes", "target": "auto"},
                {"type": "git_clean", "target": ""},
                {"type": "command_succeeds", "target": "npm run build", "description": null}
            ]
        });
        let manifest = to_manifest(&task, &Spans::default()).unwrap();
        assert_eq!(
            manifest,
            json!({
                "version": 1,
                "environments": [{"name": "local"}],
                "run-timeout": "5000ms",
                "skip": false,
                "checks": [
                    {"id": "step-1", "name": "bundle", "file": "dist/app.js"},
                    {"id": "step-2", "test": "auto"},
                    {"id": "step-3", "git-clean": "."},
                    {"id": "step-4", "run": "npm run build"}
                ]
            })
        );
    }

    #[test]
    fn a_path_target_stays_inside_the_tasks_folder() {
        let task = json!({
            "verification_steps": [
                {"type": "file_exists", "target": "../secrets/token"},
                {"type": "file_exists", "target": "/etc/passwd"},
                {"type": "git_clean", "target": "sub/../../other"},
                {"type": "file_exists", "target": "dist/..app.js"}
            ]
        });
        let paths: Vec<String> = to_manifest(&task, &Spans::default())
            .unwrap_err()
            .into_iter()
            .map(|d| format!("{}: {}", d.path, d.message))
            .collect();
        assert_eq!(
            paths,
            [
                "verification_steps[0].target: `../secrets/token`: `..` leaves the task's folder; a step's target is looked for inside it",
                "verification_steps[1].target: `/etc/passwd`: it is absolute; give a path relative to the task's folder",
                "verification_steps[2].target: `sub/../../other`: `..` leaves the task's folder; a step's target is looked for inside it",
            ]
        );
    }

    #[test]
    fn every_problem_is_named_by_its_path() {
        let task = json!({
            "skip_verification": "yes",
            "verification_timeout_ms": -5,
            "verification_steps": [
                {"type": "lint_passes", "target": "x"},
                {"type": "command_succeeds"},
                {"type": "file_exists", "target": "a", "when": "always"},
                "npm test"
            ]
        });
        let paths: Vec<String> = to_manifest(&task, &Spans::default())
            .unwrap_err()
            .into_iter()
            .map(|d| format!("{}: {}", d.path, d.message))
            .collect();
        assert_eq!(
            paths,
            [
                "skip_verification: `skip_verification` must be true or false, not \"yes\"",
                "verification_timeout_ms: `verification_timeout_ms` must be a whole number of milliseconds above zero, not -5",
                "verification_steps[0].type: unknown step type `lint_passes`; expected one of: file_exists, test_passes, git_clean, command_succeeds",
                "verification_steps[1].target: a `command_succeeds` step needs a `target`",
                "verification_steps[2].when: unknown key `when` in a step; expected type, target, description",
                "verification_steps[3]: a step must be a mapping with `type` and `target`, not \"npm test\"",
            ]
        );
    }
}
