//! From manifest content (as JSON) to the raw model, collecting every structural problem.
//!
//! The fast path deserializes the whole document at once. serde stops at its first
//! error, so when that fails the document is deserialized again part by part (each
//! top-level key, each environment, each check) to report every broken part together.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::diagnostic::{Diagnostic, did_you_mean, humanize_serde_message};
use super::raw::{
    RawCheck, RawDefaults, RawDuration, RawEnvironment, RawHistory, RawHook, RawManifest,
    RawPolicy, RawRedact, TOP_LEVEL_KEYS,
};
use super::spans::{Spans, join_index, join_key};

/// The raw model, and for each of its checks the index it has in the document (checks
/// that did not deserialize are left out, so the two can differ).
#[derive(Debug)]
pub struct Parsed {
    pub raw: RawManifest,
    pub check_indices: Vec<usize>,
    /// Whether `environments` deserialized; when not (an error already says why), the
    /// checks are still validated, without judging the environments they name.
    pub environments_known: bool,
}

/// Deserializes `value` into the raw model. On problems, also returns what could be
/// salvaged (every part that did deserialize), so validation can still report its own
/// findings about those parts in the same run.
pub fn deserialize(value: &Value, spans: &Spans) -> (Option<Parsed>, Vec<Diagnostic>) {
    let whole = match serde_path_to_error::deserialize::<_, RawManifest>(value) {
        Ok(raw) => {
            let check_indices = (0..raw.checks.len()).collect();
            let parsed = Parsed {
                raw,
                check_indices,
                environments_known: true,
            };
            return (Some(parsed), Vec::new());
        }
        Err(e) => e,
    };
    let Some(map) = value.as_object() else {
        let diagnostic = Diagnostic::new(
            "",
            format!(
                "the manifest must be a mapping with `version`, `environments` and `checks`, found {}",
                describe(value)
            ),
            spans.locate(""),
        );
        return (None, vec![diagnostic]);
    };
    let mut diagnostics = Vec::new();
    let mut salvage = Salvage::default();
    for (key, v) in map {
        let d = &mut diagnostics;
        match key.as_str() {
            "version" => salvage.version = part::<u32>(key, v, spans, d),
            "environments" => salvage.environments = environments(key, v, spans, d),
            "checks" => {
                let items = seq_part::<RawCheck>(key, v, spans, d);
                salvage.checks = items.map(|items| {
                    items
                        .into_iter()
                        .enumerate()
                        .filter_map(|(i, c)| c.map(|c| (i, c)))
                        .collect()
                });
            }
            "defaults" => salvage.defaults = part::<RawDefaults>(key, v, spans, d),
            "run-timeout" => salvage.run_timeout = part::<RawDuration>(key, v, spans, d),
            "policy" => salvage.policy = part::<RawPolicy>(key, v, spans, d),
            "skip" => salvage.skip = part::<bool>(key, v, spans, d),
            "fail-on" => salvage.fail_on = part::<super::model::FailOn>(key, v, spans, d),
            "hook" => salvage.hook = part::<RawHook>(key, v, spans, d),
            "redact" => salvage.redact = part::<RawRedact>(key, v, spans, d),
            "history" => salvage.history = part::<RawHistory>(key, v, spans, d),
            other => d.push(unknown_key("", other, TOP_LEVEL_KEYS, spans)),
        }
    }
    for required in ["version", "environments"] {
        if !map.contains_key(required) {
            diagnostics.push(Diagnostic::new(
                "",
                format!("missing key `{required}`"),
                spans.locate(""),
            ));
        }
    }
    if diagnostics.is_empty() {
        // Every part deserialized alone but not together: report serde's own finding.
        diagnostics.push(from_serde("", &whole, spans));
    }
    (salvage.finish(), diagnostics)
}

/// The parts of a broken manifest that deserialized.
#[derive(Default)]
struct Salvage {
    version: Option<u32>,
    environments: Option<Vec<RawEnvironment>>,
    checks: Option<Vec<(usize, RawCheck)>>,
    defaults: Option<RawDefaults>,
    run_timeout: Option<RawDuration>,
    policy: Option<RawPolicy>,
    skip: Option<bool>,
    fail_on: Option<super::model::FailOn>,
    hook: Option<RawHook>,
    redact: Option<RawRedact>,
    history: Option<RawHistory>,
}

impl Salvage {
    /// A manifest to validate. Without its environments, the checks are validated
    /// without judging the environments they name.
    fn finish(self) -> Option<Parsed> {
        let environments_known = self.environments.is_some();
        let (check_indices, checks) = self.checks.unwrap_or_default().into_iter().unzip();
        Some(Parsed {
            raw: RawManifest {
                version: self.version.unwrap_or(super::validate::SUPPORTED_VERSION),
                environments: self.environments.unwrap_or_default(),
                defaults: self.defaults.unwrap_or_default(),
                run_timeout: self.run_timeout,
                policy: self.policy.unwrap_or_default(),
                skip: self.skip.unwrap_or_default(),
                fail_on: self.fail_on,
                hook: self.hook,
                redact: self.redact,
                history: self.history,
                checks,
            },
            check_indices,
            environments_known,
        })
    }
}

/// Environments that deserialized, plus the names of those that did not (so checks
/// naming them are not reported as naming undeclared environments).
fn environments(
    key: &str,
    value: &Value,
    spans: &Spans,
    out: &mut Vec<Diagnostic>,
) -> Option<Vec<RawEnvironment>> {
    let first = out.len();
    let items = seq_part::<RawEnvironment>(key, value, spans, out)?;
    let raw = value.as_array()?;
    // `environments: [linux, macos]`: each is a mapping with a `name`; say how to write
    // it (and go on with the names, so nothing else is said wrongly of them).
    for (i, item) in raw.iter().enumerate() {
        if let Some(name) = item.as_str() {
            let path = join_index(key, i);
            for d in out[first..].iter_mut().filter(|d| d.path == path) {
                d.message = format!(
                    "an environment is a mapping with a `name`: write `{{name: {name}}}`, not `{name}`"
                );
            }
        }
    }
    Some(
        items
            .into_iter()
            .zip(raw)
            .filter_map(|(env, raw)| {
                env.or_else(|| {
                    let name = match raw.as_str() {
                        Some(name) => name.to_owned(),
                        None => raw.get("name")?.as_str()?.to_owned(),
                    };
                    Some(RawEnvironment {
                        name,
                        ..RawEnvironment::default()
                    })
                })
            })
            .collect(),
    )
}

fn part<T: DeserializeOwned>(
    key: &str,
    value: &Value,
    spans: &Spans,
    out: &mut Vec<Diagnostic>,
) -> Option<T> {
    serde_path_to_error::deserialize::<_, T>(value)
        .map_err(|e| out.push(from_serde(key, &e, spans)))
        .ok()
}

/// Each item of a list on its own; `None` when the value is not a list.
fn seq_part<T: DeserializeOwned>(
    key: &str,
    value: &Value,
    spans: &Spans,
    out: &mut Vec<Diagnostic>,
) -> Option<Vec<Option<T>>> {
    let Some(items) = value.as_array() else {
        part::<Vec<T>>(key, value, spans, out);
        return None;
    };
    Some(
        items
            .iter()
            .enumerate()
            .map(|(i, item)| part::<T>(&join_index(key, i), item, spans, out))
            .collect(),
    )
}

/// Turns a serde error at `prefix` + its own path into a positioned diagnostic.
fn from_serde(
    prefix: &str,
    error: &serde_path_to_error::Error<serde_json::Error>,
    spans: &Spans,
) -> Diagnostic {
    let inner = error.path().to_string();
    let mut path = match inner.as_str() {
        "." => prefix.to_owned(),
        p if prefix.is_empty() => p.to_owned(),
        p if p.starts_with('[') => format!("{prefix}{p}"),
        p => join_key(prefix, p),
    };
    let raw = error.inner().to_string();
    let message = humanize_serde_message(&raw);
    // An unknown key is reported at the key itself, not at the mapping holding it.
    if let Some(rest) = raw.strip_prefix("unknown field `") {
        let name = &rest[..rest.find('`').unwrap_or(rest.len())];
        if !(path == name || path.ends_with(&format!(".{name}"))) {
            path = join_key(&path, name);
        }
        return Diagnostic::new(path.clone(), message, spans.locate_key(&path));
    }
    let pos = spans.locate(&path);
    Diagnostic::new(path, message, pos)
}

/// An unknown key among `known`.
pub fn unknown_key(parent: &str, key: &str, known: &[&str], spans: &Spans) -> Diagnostic {
    let path = join_key(parent, key);
    let message = match did_you_mean(key, known.iter().copied()) {
        Some(best) => format!("unknown key `{key}` (did you mean `{best}`?)"),
        None => format!("unknown key `{key}`; expected one of: {}", known.join(", ")),
    };
    Diagnostic::new(path.clone(), message, spans.locate_key(&path))
}

fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "an empty document",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}
