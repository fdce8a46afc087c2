//! The AoT loop's `base_case`, read as a manifest: its items become checks of one
//! environment (`local`), so they go through the same plan → run → results pipeline;
//! `render --format aot` answers in the loop's verifier contract.
//!
//! ```yaml
//! base_case:                 # at the top, under `objective:` (the loop's state file), or bare
//!   checklist:
//!     - item: Tests pass
//!       check: { type: command, value: npm test }
//!     - item: Release ready
//!       group:               # AND; `any_of:` is OR
//!         - item: No source maps
//!           check: { type: not_file, value: "dist/*.map" }
//!         - item: Readable
//!           check: { type: quality, criteria: small functions, pass_threshold: 3 }
//! ```
//!
//! `command` → `run:`, `not_command` → `run:` with `expect: failure`, `file` → `file:`,
//! `not_file` → `not-file:`, `assertion` → `assert:`, `quality` → `quality:` (both left
//! to a person or a judge, never run), `group` → `all-of:`, `any_of` → `any-of:`. The
//! checklist's items are the checks `item-1`, `item-2`, … named by their `item:` text, and
//! a group's items are `1`, `2`, … within it. The older single check (`{type, value}`) is
//! the check `base-case`, named by its value. A `command` that is an and-list
//! (`cd web && npm test`) is one check, run as one shell command: state carries across
//! `&&` as in a shell, and a failing command stops the list. A check's time limit is
//! 120 s, as the loop's own verifier has it.
//!
//! A Markdown file (the loop's `.claude/aot-loop-state.md`) is read by its YAML front
//! matter; see [`front_matter`]. [`from_manifest`] turns any manifest back into a base
//! case for the answer, so the render needs only the manifest the results carry.

use serde_json::{Map, Value, json};

use super::diagnostic::Diagnostic;
use super::model::{Check, CheckKind, ExpectExit, Manifest, TestSpec};
use super::spans::{Spans, join_index, join_key};

/// The check types, in the order they are documented.
pub const CHECK_TYPES: &[&str] = &[
    "command",
    "not_command",
    "file",
    "not_file",
    "assertion",
    "quality",
];

/// The time limit of each check (the loop's verifier gives a command 120 s).
pub const CHECK_TIMEOUT: &str = "120s";

/// A base case, as the verifier contract answers it.
#[derive(Debug, Clone, PartialEq)]
pub struct BaseCase {
    pub shape: Shape,
    /// The checks, in order: one for [`Shape::Single`], the top-level items of a
    /// checklist.
    pub items: Vec<Item>,
}

/// Which of the contract's answers a base case gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `{type, value}`: one check (an and-list too: one shell command).
    Single,
    /// `checklist:`: the `evaluation_type: "checklist"` answer with its tree.
    Checklist,
}

/// One item: a check, or a group of items.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// The check's id (top level) or the item's name in its group.
    pub id: String,
    /// The `item:` text (the value itself for the single check).
    pub item: String,
    pub body: Body,
}

/// What an item holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Check(Leaf),
    /// `group:` (`any: false`, AND) or `any_of:` (OR).
    Group {
        any: bool,
        items: Vec<Item>,
    },
}

/// A `check:` as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Leaf {
    /// One of [`CHECK_TYPES`].
    pub kind: String,
    pub value: Option<String>,
    /// `quality`: what is judged (`criteria:`, else the rubric's criteria).
    pub criteria: Option<String>,
    pub pass_threshold: Option<f64>,
    pub scope: Option<String>,
}

impl Leaf {
    /// Left to a person (`assertion`) or a judge (`quality`): never run.
    pub fn is_manual(&self) -> bool {
        matches!(self.kind.as_str(), "assertion" | "quality")
    }
}

/// Where the base case is in `content` and its key path: `base_case` at the top or
/// under `objective`, or the document itself when it is a bare base case (`checklist`,
/// or `type` with `value`). `None` for anything with a `version` (a manifest).
pub fn locate(content: &Value) -> Option<(&Value, &'static str)> {
    let map = content.as_object()?;
    if map.contains_key("version") {
        return None;
    }
    if let Some(case) = map.get("base_case") {
        return Some((case, "base_case"));
    }
    if let Some(case) = map.get("objective").and_then(|o| o.get("base_case")) {
        return Some((case, "objective.base_case"));
    }
    (map.contains_key("checklist") || (map.contains_key("type") && map.contains_key("value")))
        .then_some((content, ""))
}

/// Whether `content` holds a base case.
pub fn is_aot(content: &Value) -> bool {
    locate(content).is_some()
}

/// The YAML front matter of Markdown `text` (between a first line `---` and the next
/// `---` or `...` line), with the opening line blanked so that line numbers stay the
/// file's own; `None` when the text has none.
pub fn front_matter(text: &str) -> Option<String> {
    let mut lines = text.split_inclusive('\n');
    let first = lines.next()?;
    if first.trim_end() != "---" {
        return None;
    }
    let mut out = String::from("\n");
    for line in lines {
        if matches!(line.trim_end(), "---" | "...") {
            return Some(out);
        }
        out.push_str(line);
    }
    None
}

/// Whether `path` names a Markdown file, whose front matter is the manifest.
pub fn is_markdown(path: &std::path::Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown"))
}

/// The base case `case` (found at key path `at`); every problem, located in its text.
pub fn read(case: &Value, at: &str, spans: &Spans) -> Result<BaseCase, Vec<Diagnostic>> {
    let mut reader = Reader {
        spans,
        problems: Vec::new(),
    };
    let case = reader.base_case(case, at);
    match case {
        Some(case) if reader.problems.is_empty() => Ok(case),
        _ => Err(reader.problems),
    }
}

/// The base case a manifest answers as: any manifest, not only one read from a base
/// case (its checks are the checklist's items; `base-case` alone is the older single
/// check).
pub fn from_manifest(manifest: &Manifest) -> BaseCase {
    let ids: Vec<&str> = manifest.checks.iter().map(|c| c.id.as_str()).collect();
    let shape = match ids.as_slice() {
        ["base-case"] => Shape::Single,
        _ => Shape::Checklist,
    };
    BaseCase {
        shape,
        items: manifest.checks.iter().map(item_of).collect(),
    }
}

fn item_of(check: &Check) -> Item {
    let leaf = |kind: &str, value: &str| {
        Body::Check(Leaf {
            kind: kind.to_owned(),
            value: Some(value.to_owned()),
            criteria: None,
            pass_threshold: None,
            scope: None,
        })
    };
    let body = match &check.kind {
        CheckKind::Run(cmd) if check.expect == ExpectExit::Failure => leaf("not_command", cmd),
        CheckKind::Run(cmd) | CheckKind::Test(TestSpec::Command(cmd)) => leaf("command", cmd),
        CheckKind::Test(TestSpec::Auto) => leaf("command", "auto"),
        CheckKind::File { pattern, .. } => leaf("file", pattern),
        CheckKind::NotFile { pattern } => leaf("not_file", pattern),
        CheckKind::GitClean { path } => leaf("git_clean", path),
        CheckKind::Assert(text) => leaf("assertion", text),
        CheckKind::Quality {
            criteria,
            pass_threshold,
            scope,
        } => Body::Check(Leaf {
            kind: "quality".to_owned(),
            value: None,
            criteria: Some(criteria.clone()),
            pass_threshold: *pass_threshold,
            scope: scope.clone(),
        }),
        CheckKind::AllOf(items) | CheckKind::AnyOf(items) => Body::Group {
            any: matches!(check.kind, CheckKind::AnyOf(_)),
            items: items.iter().map(item_of).collect(),
        },
    };
    Item {
        id: check.id.to_string(),
        item: check.name.clone().unwrap_or_else(|| check.id.to_string()),
        body,
    }
}

/// The folder, relative to the manifest file at `path`, where the loop runs its checks:
/// the project's root. The loop keeps its state in `.claude/`, so a file there runs
/// its checks from the folder above; any other file from its own folder.
pub fn checks_folder(path: &std::path::Path) -> &'static str {
    let parent = path.parent().and_then(|p| p.file_name());
    if parent.is_some_and(|name| name == ".claude") {
        ".."
    } else {
        "."
    }
}

/// The manifest of `case`, its checks run in `cwd` (see [`checks_folder`]).
pub fn to_manifest(case: &BaseCase, cwd: &str) -> Value {
    json!({
        "version": 1,
        "environments": [{"name": super::steps::ENVIRONMENT}],
        "defaults": {"timeout": CHECK_TIMEOUT, "cwd": cwd},
        "checks": case.items.iter().map(|i| check(i, "id")).collect::<Vec<_>>(),
    })
}

/// The manifest check (or group item, `name_key` = `item`) of `item`.
fn check(item: &Item, name_key: &str) -> Value {
    let mut out = Map::new();
    out.insert(name_key.to_owned(), json!(item.id));
    out.insert("name".to_owned(), json!(item.item));
    match &item.body {
        Body::Group { any, items } => {
            let key = if *any { "any-of" } else { "all-of" };
            let items: Vec<Value> = items.iter().map(|i| check(i, "item")).collect();
            out.insert(key.to_owned(), json!(items));
        }
        Body::Check(leaf) => {
            let value = json!(leaf.value.clone().unwrap_or_default());
            match leaf.kind.as_str() {
                "command" => {
                    out.insert("run".to_owned(), value);
                }
                "not_command" => {
                    out.insert("run".to_owned(), value);
                    out.insert("expect".to_owned(), json!("failure"));
                }
                "file" => {
                    out.insert("file".to_owned(), value);
                }
                "not_file" => {
                    out.insert("not-file".to_owned(), value);
                }
                "assertion" => {
                    out.insert("assert".to_owned(), value);
                }
                _ => {
                    let mut quality = Map::new();
                    quality.insert("criteria".to_owned(), json!(leaf.criteria));
                    if let Some(threshold) = leaf.pass_threshold {
                        quality.insert("pass-threshold".to_owned(), json!(threshold));
                    }
                    if let Some(scope) = &leaf.scope {
                        quality.insert("scope".to_owned(), json!(scope));
                    }
                    out.insert("quality".to_owned(), Value::Object(quality));
                }
            }
        }
    }
    Value::Object(out)
}

struct Reader<'a> {
    spans: &'a Spans,
    problems: Vec<Diagnostic>,
}

impl Reader<'_> {
    fn error(&mut self, path: &str, message: String) {
        let pos = self.spans.locate(path);
        self.problems
            .push(Diagnostic::new(path.to_owned(), message, pos));
    }

    /// `map`'s keys outside `known`, as errors.
    fn unknown_keys(&mut self, at: &str, map: &Map<String, Value>, known: &[&str], what: &str) {
        for key in map.keys() {
            if !known.contains(&key.as_str()) {
                self.error(
                    &join_key(at, key),
                    format!(
                        "unknown key `{key}` in {what}; expected {}",
                        known.join(", ")
                    ),
                );
            }
        }
    }

    /// The string at `map[key]` (`None` when absent or null).
    fn text(&mut self, at: &str, map: &Map<String, Value>, key: &str) -> Option<String> {
        match map.get(key)? {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            // YAML's unquoted numbers and booleans are text here too (`value: 42`).
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            other => {
                self.error(
                    &join_key(at, key),
                    format!("`{key}` must be a string, not {other}"),
                );
                None
            }
        }
    }

    fn base_case(&mut self, case: &Value, at: &str) -> Option<BaseCase> {
        let Some(map) = case.as_object() else {
            self.error(
                at,
                format!("a base case must be a mapping with `checklist`, or `type` and `value`, not {case}"),
            );
            return None;
        };
        if let Some(list) = map.get("checklist") {
            // In the loop's state file the base case may sit beside other keys of the
            // objective; a bare document's other keys are its own business too.
            if map.contains_key("type") {
                self.error(
                    &join_key(at, "type"),
                    "a base case has either `checklist` or `type` and `value`, not both".to_owned(),
                );
            }
            let items = self.items(list, &join_key(at, "checklist"), |i| format!("item-{i}"));
            return Some(BaseCase {
                shape: Shape::Checklist,
                items,
            });
        }
        if !map.contains_key("type") {
            self.error(
                at,
                "a base case needs a `checklist`, or a `type` and a `value`".to_owned(),
            );
            return None;
        }
        let leaf = self.leaf(map, at)?;
        // An and-list is one check: a shell runs it as one command, with `cd` and
        // exported variables carrying across `&&`, and stops at the first failure.
        Some(BaseCase {
            shape: Shape::Single,
            items: vec![Item {
                id: "base-case".to_owned(),
                // Named by what it checks.
                item: leaf
                    .value
                    .clone()
                    .or_else(|| leaf.criteria.clone())
                    .unwrap_or_else(|| "base_case".to_owned()),
                body: Body::Check(leaf),
            }],
        })
    }

    /// The items of the list `list` at `at`, their ids made by `id` from their number.
    fn items(&mut self, list: &Value, at: &str, id: impl Fn(usize) -> String) -> Vec<Item> {
        let Some(list) = list.as_array().filter(|l| !l.is_empty()) else {
            self.error(
                at,
                format!("`{}` must be a non-empty list of items", last_key(at)),
            );
            return Vec::new();
        };
        let mut items = Vec::new();
        for (index, entry) in list.iter().enumerate() {
            let at = join_index(at, index);
            if let Some(body) = self.item(entry, &at) {
                items.push(Item {
                    id: id(index + 1),
                    item: body.0,
                    body: body.1,
                });
            }
        }
        items
    }

    fn item(&mut self, entry: &Value, at: &str) -> Option<(String, Body)> {
        let Some(map) = entry.as_object() else {
            self.error(
                at,
                format!("an item must be a mapping with `item` and `check`, `group` or `any_of`, not {entry}"),
            );
            return None;
        };
        self.unknown_keys(at, map, &["item", "check", "group", "any_of"], "an item");
        let name = self.text(at, map, "item").filter(|n| !n.trim().is_empty());
        let bodies: Vec<&str> = ["check", "group", "any_of"]
            .into_iter()
            .filter(|k| map.contains_key(*k))
            .collect();
        let Some(name) = name else {
            self.error(at, "an item needs an `item:` naming it".to_owned());
            return None;
        };
        match bodies.as_slice() {
            ["check"] => {
                let check_at = join_key(at, "check");
                let Some(check) = map["check"].as_object() else {
                    self.error(
                        &check_at,
                        "`check` must be a mapping with `type` and `value`".to_owned(),
                    );
                    return None;
                };
                let leaf = self.leaf(check, &check_at)?;
                Some((name, Body::Check(leaf)))
            }
            [key @ ("group" | "any_of")] => {
                let any = *key == "any_of";
                let items = self.items(&map[*key], &join_key(at, key), |i| i.to_string());
                Some((name, Body::Group { any, items }))
            }
            [] => {
                self.error(
                    at,
                    format!("item `{name}` needs one of `check`, `group`, `any_of`"),
                );
                None
            }
            several => {
                self.error(
                    at,
                    format!(
                        "item `{name}` has {}; an item has exactly one",
                        several.join(" and ")
                    ),
                );
                None
            }
        }
    }

    /// A `check:` (or the older base case's own `type` and `value`).
    fn leaf(&mut self, map: &Map<String, Value>, at: &str) -> Option<Leaf> {
        self.unknown_keys(
            at,
            map,
            &[
                "type",
                "value",
                "criteria",
                "pass_threshold",
                "rubric",
                "scope",
            ],
            "a check",
        );
        let kind = self.text(at, map, "type");
        let value = self.text(at, map, "value");
        let criteria = self.text(at, map, "criteria");
        let scope = self.text(at, map, "scope");
        let pass_threshold = match map.get("pass_threshold") {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_f64() {
                Some(n) => Some(n),
                None => {
                    self.error(
                        &join_key(at, "pass_threshold"),
                        format!("`pass_threshold` must be a number, not {v}"),
                    );
                    None
                }
            },
        };
        let rubric = map.get("rubric").filter(|r| !r.is_null());
        let Some(kind) = kind else {
            self.error(
                &join_key(at, "type"),
                format!("a check needs a `type`: one of {}", CHECK_TYPES.join(", ")),
            );
            return None;
        };
        if !CHECK_TYPES.contains(&kind.as_str()) {
            self.error(
                &join_key(at, "type"),
                format!(
                    "unknown check type `{kind}`; expected one of: {}",
                    CHECK_TYPES.join(", ")
                ),
            );
            return None;
        }
        let mut leaf = Leaf {
            kind,
            value,
            criteria,
            pass_threshold,
            scope,
        };
        if leaf.kind == "quality" {
            leaf.criteria = leaf
                .criteria
                .take()
                .or_else(|| rubric.map(rubric_criteria))
                .or_else(|| leaf.value.clone())
                .filter(|c| !c.trim().is_empty());
            if leaf.criteria.is_none() {
                self.error(
                    at,
                    "a `quality` check needs `criteria` or a `rubric`".to_owned(),
                );
                return None;
            }
        } else if leaf.value.as_deref().is_none_or(|v| v.trim().is_empty()) {
            self.error(
                &join_key(at, "value"),
                format!("a `{}` check needs a `value`", leaf.kind),
            );
            return None;
        }
        Some(leaf)
    }
}

/// A rubric's criteria in one line: `Readability (weight 0.4): …; Design: …`.
fn rubric_criteria(rubric: &Value) -> String {
    match rubric {
        Value::Array(entries) => entries
            .iter()
            .map(|e| {
                let field = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("");
                let weight = e
                    .get("weight")
                    .and_then(Value::as_f64)
                    .map(|w| format!(" (weight {w})"))
                    .unwrap_or_default();
                match (field("criterion"), field("description")) {
                    ("", "") => e.to_string(),
                    (c, "") => format!("{c}{weight}"),
                    ("", d) => format!("{d}{weight}"),
                    (c, d) => format!("{c}{weight}: {d}"),
                }
            })
            .collect::<Vec<_>>()
            .join("; "),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn last_key(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(yaml: &str) -> Result<BaseCase, Vec<String>> {
        let content: Value = serde_yaml::from_str(yaml).unwrap();
        let (case, at) = locate(&content).expect("a base case");
        read(case, at, &Spans::default()).map_err(|d| {
            d.into_iter()
                .map(|d| format!("{}: {}", d.path, d.message))
                .collect()
        })
    }

    #[test]
    fn a_base_case_is_found_where_the_loop_keeps_it() {
        for (yaml, at) in [
            ("base_case: {type: file, value: a}", "base_case"),
            (
                "objective: {goal: g, base_case: {type: file, value: a}}",
                "objective.base_case",
            ),
            ("checklist: []", ""),
            ("type: command\nvalue: make", ""),
        ] {
            let content: Value = serde_yaml::from_str(yaml).unwrap();
            assert_eq!(locate(&content).map(|l| l.1), Some(at), "{yaml}");
        }
        for yaml in ["version: 1\nbase_case: {}", "checks: []", "type: command"] {
            let content: Value = serde_yaml::from_str(yaml).unwrap();
            assert!(!is_aot(&content), "{yaml}");
        }
    }

    #[test]
    fn every_type_and_group_becomes_its_check_kind() {
        let case = case(
            "checklist:
  - item: Tests pass
    check: {type: command, value: npm test}
  - item: Release
    group:
      - item: No vulnerabilities
        check: {type: not_command, value: npm audit}
      - item: Built
        any_of:
          - item: Bundle
            check: {type: file, value: dist/app.js}
          - item: No maps
            check: {type: not_file, value: 'dist/*.map'}
  - item: Works
    check: {type: assertion, value: login answers 200}
  - item: Tidy
    check:
      type: quality
      rubric: [{criterion: Readability, description: clear names, weight: 0.4}, {criterion: Design}]
      pass_threshold: 3.5
      scope: 'src/**'
",
        )
        .unwrap();
        assert_eq!(case.shape, Shape::Checklist);
        assert_eq!(
            to_manifest(&case, "."),
            json!({
                "version": 1,
                "environments": [{"name": "local"}],
                "defaults": {"timeout": "120s", "cwd": "."},
                "checks": [
                    {"id": "item-1", "name": "Tests pass", "run": "npm test"},
                    {"id": "item-2", "name": "Release", "all-of": [
                        {"item": "1", "name": "No vulnerabilities", "run": "npm audit", "expect": "failure"},
                        {"item": "2", "name": "Built", "any-of": [
                            {"item": "1", "name": "Bundle", "file": "dist/app.js"},
                            {"item": "2", "name": "No maps", "not-file": "dist/*.map"}
                        ]}
                    ]},
                    {"id": "item-3", "name": "Works", "assert": "login answers 200"},
                    {"id": "item-4", "name": "Tidy", "quality": {
                        "criteria": "Readability (weight 0.4): clear names; Design", "pass-threshold": 3.5, "scope": "src/**"
                    }}
                ]
            })
        );
    }

    #[test]
    fn a_base_case_survives_the_trip_through_its_manifest() {
        for yaml in [
            "type: command\nvalue: npm test && npm run build",
            "type: file\nvalue: dist/app.js",
            "checklist:\n  - item: A\n    any_of:\n      - {item: B, check: {type: not_command, value: 'exit 1'}}\n      - {item: C, check: {type: quality, criteria: tidy, pass_threshold: 3, scope: src}}\n",
        ] {
            let read = case(yaml).unwrap();
            let manifest = crate::manifest::from_embedded(
                std::path::Path::new("m.yml"),
                to_manifest(&read, "."),
            )
            .unwrap();
            let back = from_manifest(&manifest);
            assert_eq!(back.shape, read.shape, "{yaml}");
            let ids = |c: &BaseCase| format!("{:?}", c.items);
            // Group items keep their names; the trip gives them back as their ids' items.
            assert_eq!(ids(&back), ids(&read), "{yaml}");
        }
    }

    #[test]
    fn an_and_list_command_is_one_check() {
        for value in ["cd sub && sh check.sh", "npm test || true", "a && b"] {
            let single = case(&format!("type: command\nvalue: {value}")).unwrap();
            assert_eq!(single.shape, Shape::Single, "{value}");
            assert_eq!(single.items.len(), 1, "{value}");
            assert_eq!(single.items[0].id, "base-case");
            assert_eq!(single.items[0].item, value);
        }
    }

    #[test]
    fn every_problem_is_named_by_its_path() {
        let problems = case(
            "base_case:
  checklist:
    - item: a
      check: {type: lint, value: x}
    - item: b
      check: {type: command}
    - item: c
      group: []
    - item: d
      check: {type: file, value: x}
      any_of: [{item: e, check: {type: file, value: y}}]
    - check: {type: file, value: x}
    - item: f
      check: {type: quality, pass_threshold: high}
    - item: g
      when: always
      check: {type: file, value: x}
    - npm test
",
        )
        .unwrap_err();
        assert_eq!(
            problems,
            [
                "base_case.checklist[0].check.type: unknown check type `lint`; expected one of: command, not_command, file, not_file, assertion, quality",
                "base_case.checklist[1].check.value: a `command` check needs a `value`",
                "base_case.checklist[2].group: `group` must be a non-empty list of items",
                "base_case.checklist[3]: item `d` has check and any_of; an item has exactly one",
                "base_case.checklist[4]: an item needs an `item:` naming it",
                "base_case.checklist[5].check.pass_threshold: `pass_threshold` must be a number, not \"high\"",
                "base_case.checklist[5].check: a `quality` check needs `criteria` or a `rubric`",
                "base_case.checklist[6].when: unknown key `when` in an item; expected item, check, group, any_of",
                "base_case.checklist[7]: an item must be a mapping with `item` and `check`, `group` or `any_of`, not \"npm test\"",
            ]
        );
    }

    #[test]
    fn the_loops_state_folder_runs_checks_from_the_project_root() {
        let folder = |p: &str| checks_folder(std::path::Path::new(p));
        assert_eq!(folder(".claude/aot-loop-state.md"), "..");
        assert_eq!(folder("/repo/.claude/aot-loop-state.md"), "..");
        assert_eq!(folder("base-case.yml"), ".");
        assert_eq!(folder("ci/base-case.yml"), ".");
    }

    #[test]
    fn front_matter_keeps_the_files_line_numbers() {
        let text = "---\nobjective:\n  goal: g\n---\n# Original prompt\n---\n";
        assert_eq!(
            front_matter(text).as_deref(),
            Some("\nobjective:\n  goal: g\n")
        );
        assert_eq!(front_matter("# no front matter\n"), None);
        assert_eq!(front_matter("---\nnever closed\n"), None);
    }
}
