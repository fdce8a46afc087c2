//! From the raw model to the validated [`Manifest`](super::Manifest), collecting every problem at once.

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use super::diagnostic::{Diagnostic, did_you_mean};
use super::model::{
    Check, CheckId, CheckKind, DEFAULT_GRACE, DEFAULT_TIMEOUT, Defaults, Detect, Enter, EnvName,
    EnvScope, Environment, ExpectExit, FailOn, Gate, Hook, MAX_NAME_CHARS, MAX_SHARDS, Policy,
    Quarantine, REPO_PLACEHOLDER, Redact, Shell, Split, TestSpec, is_valid_name, placeholders_in,
    report_pattern_problem,
};
use super::parse::Parsed;
use super::raw::{
    EnvValue, Expect, RawCheck, RawDefaults, RawDuration, RawEnvironment, RawManifest, RawPaths,
    RawPercent,
};
use super::runs_on;
use super::spans::{Spans, join_index, join_key};
use crate::shell::words;

mod checks;
mod enter;
mod shards;

pub use enter::resolve_enter_files;

/// The version of the manifest format this build reads.
pub const SUPPORTED_VERSION: u32 = 1;

/// The longest `timeout` and `run-timeout`: 7 days.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 3600);

/// The longest `grace`: 1 hour.
pub const MAX_GRACE: Duration = Duration::from_secs(3600);

/// The most `retries`.
pub const MAX_RETRIES: u32 = 100;

/// The most patterns in one check's `reports`.
pub const MAX_REPORT_PATTERNS: usize = 20;

/// The most `quarantine` entries on one check.
pub const MAX_QUARANTINE: usize = 1_000;

/// What a process can exit with: the codes a check can require, and the only ones a
/// result can pass with.
pub const EXIT_CODES: std::ops::RangeInclusive<i32> = 0..=255;

/// Everything validation produces besides the file facts (path, digest, content).
#[derive(Debug)]
pub struct Validated {
    pub environments: Vec<Environment>,
    pub checks: Vec<Check>,
    pub defaults: Defaults,
    pub run_timeout: Option<Duration>,
    pub policy: Policy,
    pub redact: Redact,
    pub skip: bool,
    pub fail_on: FailOn,
    pub hook: Hook,
    pub history: super::model::HistoryKeep,
}

/// Validates `raw`; every problem found is returned, not only the first.
/// `check_indices[i]` is the position of `raw.checks[i]` in the document.
pub fn validate(
    parsed: &Parsed,
    content: &serde_json::Value,
    spans: &Spans,
) -> Result<Validated, Vec<Diagnostic>> {
    let (raw, check_indices) = (&parsed.raw, &parsed.check_indices);
    let mut v = Validator {
        spans,
        diagnostics: Vec::new(),
        env_names: Vec::new(),
        environments_known: parsed.environments_known,
    };
    if raw.version != SUPPORTED_VERSION {
        v.error(
            "version",
            format!(
                "unsupported manifest version {}; this tool reads version {SUPPORTED_VERSION}",
                raw.version
            ),
        );
    }
    let environments = v.environments(&raw.environments);
    let defaults = &raw.defaults;
    v.timeout("defaults.timeout", defaults.timeout, "timeout");
    v.timeout("run-timeout", raw.run_timeout, "run-timeout");
    v.grace("defaults.grace", defaults.grace);
    v.retries("defaults.retries", defaults.retries);
    v.percent("defaults.tests-may-drop", defaults.tests_may_drop);
    v.env_vars("defaults.env", &defaults.env);
    let policy = v.policy(raw);
    let redact = v.redact(raw);

    // Judged on the manifest's text, so a duplicate is reported with everything else,
    // even when either check has problems of its own (and did not parse).
    let mut ids = HashSet::new();
    let listed = content.get("checks").and_then(serde_json::Value::as_array);
    for (index, check) in listed.into_iter().flatten().enumerate() {
        if let Some(id) = check.get("id").and_then(serde_json::Value::as_str)
            && !ids.insert(id)
        {
            v.error(
                &join_key(&join_index("checks", index), "id"),
                format!("duplicate check id `{id}`; ids must be unique"),
            );
        }
    }
    let mut checks = Vec::new();
    for (check, index) in raw.checks.iter().zip(check_indices) {
        let path = join_index("checks", *index);
        if let Some(valid) = v.check(&path, check, defaults, false) {
            v.sharded_everywhere(&path, check, &valid, &environments);
            checks.push(valid);
        }
    }
    v.shards_used(raw, &environments, &checks);
    let hook = v.hook(raw, &ids);
    if !v.diagnostics.is_empty() {
        return Err(v.diagnostics);
    }
    Ok(Validated {
        environments,
        checks,
        defaults: Defaults {
            shell: defaults.shell,
            env: env_map(&defaults.env),
        },
        run_timeout: raw.run_timeout.map(|d| d.0),
        policy,
        redact,
        skip: raw.skip,
        fail_on: raw.fail_on.unwrap_or_default(),
        history: raw
            .history
            .as_ref()
            .map(|h| super::model::HistoryKeep {
                keep_runs: h.keep_runs,
                keep_days: h.keep_days,
            })
            .unwrap_or_default(),
        hook,
    })
}

struct Validator<'a> {
    spans: &'a Spans,
    diagnostics: Vec<Diagnostic>,
    env_names: Vec<EnvName>,
    /// False when `environments` did not deserialize: names are then not judged.
    environments_known: bool,
}

impl Validator<'_> {
    fn error(&mut self, path: &str, message: impl Into<String>) {
        let pos = self.spans.locate(path);
        self.diagnostics.push(Diagnostic::new(path, message, pos));
    }

    fn key_error(&mut self, path: &str, message: impl Into<String>) {
        let pos = self.spans.locate_key(path);
        self.diagnostics.push(Diagnostic::new(path, message, pos));
    }

    /// A timeout: more than zero, at most [`MAX_TIMEOUT`].
    fn timeout(&mut self, path: &str, value: Option<RawDuration>, what: &str) {
        match value {
            Some(d) if d.0.is_zero() => {
                self.error(path, format!("{what} must be greater than zero"));
            }
            Some(d) if d.0 > MAX_TIMEOUT => self.error(
                path,
                format!(
                    "{what} of {} is longer than the longest allowed, {}",
                    humantime::format_duration(d.0),
                    humantime::format_duration(MAX_TIMEOUT)
                ),
            ),
            _ => {}
        }
    }

    fn grace(&mut self, path: &str, value: Option<RawDuration>) {
        if let Some(d) = value
            && d.0 > MAX_GRACE
        {
            self.error(
                path,
                format!(
                    "grace of {} is longer than the longest allowed, {}",
                    humantime::format_duration(d.0),
                    humantime::format_duration(MAX_GRACE)
                ),
            );
        }
    }

    /// A percentage within 0..=100.
    fn percent(&mut self, path: &str, value: Option<RawPercent>) {
        if let Some(RawPercent(p)) = value
            && !(p.is_finite() && (0.0..=100.0).contains(&p))
        {
            self.error(path, format!("{p}% is not a percentage from 0 to 100"));
        }
    }

    fn retries(&mut self, path: &str, value: Option<u32>) {
        if let Some(n) = value
            && n > MAX_RETRIES
        {
            self.error(
                path,
                format!("{n} retries are more than the most allowed, {MAX_RETRIES}"),
            );
        }
    }

    /// Variables a process can be given: a name without `=` or NUL, a value without NUL.
    fn env_vars(&mut self, path: &str, vars: &Option<BTreeMap<String, EnvValue>>) {
        for (name, value) in vars.iter().flatten() {
            let at = join_key(path, name);
            if name.is_empty() || name.contains(['=', '\0']) {
                self.key_error(
                    &at,
                    format!(
                        "invalid variable name `{}`: it must be non-empty, without `=` or NUL",
                        name.escape_debug()
                    ),
                );
            } else if value.0.contains('\0') {
                self.error(
                    &at,
                    format!("the value of `{name}` contains a NUL character"),
                );
            }
        }
    }

    fn name(&mut self, path: &str, name: &str, what: &str) -> bool {
        if is_valid_name(name) {
            return true;
        }
        let shown: String = name.chars().take(MAX_NAME_CHARS).collect();
        let more = if name.chars().count() > MAX_NAME_CHARS {
            "…"
        } else {
            ""
        };
        self.error(
            path,
            format!(
                "invalid {what} `{shown}{more}`: use at most {MAX_NAME_CHARS} letters, digits, `.`, `_` and `-`, starting with a letter or digit"
            ),
        );
        false
    }

    fn environments(&mut self, raw: &[RawEnvironment]) -> Vec<Environment> {
        if raw.is_empty() && self.environments_known {
            self.error(
                "environments",
                "`environments` is empty; declare at least one environment",
            );
        }
        let mut out = Vec::new();
        for (i, env) in raw.iter().enumerate() {
            let path = join_index("environments", i);
            let name_path = join_key(&path, "name");
            if env.name == "ALL" {
                self.error(
                    &name_path,
                    "`ALL` is reserved (it means every environment); choose another name",
                );
                continue;
            }
            if !self.name(&name_path, &env.name, "environment name") {
                continue;
            }
            let name = EnvName(env.name.clone());
            if self.env_names.contains(&name) {
                self.error(&name_path, format!("duplicate environment name `{name}`"));
                continue;
            }
            if let Some(runs_on) = &env.runs_on {
                let ok = runs_on.is_string()
                    || runs_on
                        .as_array()
                        .is_some_and(|a| !a.is_empty() && a.iter().all(|l| l.is_string()));
                if !ok {
                    self.error(
                        &join_key(&path, "runs-on"),
                        "`runs-on` must be a runner label or a list of labels",
                    );
                }
            }
            if let Some(container) = &env.container {
                let ok = container.is_string()
                    || container
                        .as_object()
                        .is_some_and(|o| o.get("image").is_some_and(|i| i.is_string()));
                if !ok {
                    self.error(
                        &join_key(&path, "container"),
                        "`container` must be an image name or a mapping with `image`",
                    );
                }
            }
            if let Some(detect) = &env.detect
                && let Some(os) = &detect.os
                && !["linux", "macos", "windows"].contains(&os.as_str())
            {
                self.error(
                    &join_key(&path, "detect.os"),
                    format!("unknown os `{os}`: no machine could ever be it; expected one of: linux, macos, windows"),
                );
            }
            let arch = match env.detect.as_ref().and_then(|d| d.arch.as_deref()) {
                Some(arch) => match runs_on::normal_arch(arch) {
                    Some(normal) => Some(normal.to_owned()),
                    None => {
                        self.error(
                            &join_key(&path, "detect.arch"),
                            format!("unknown arch `{arch}`: no machine could ever be it; expected one of: x86_64 (x64, amd64), aarch64 (arm64), x86, arm, riscv64, powerpc64, s390x, loongarch64"),
                        );
                        None
                    }
                },
                None => None,
            };
            // A hosted label and `detect` that disagree describe no machine at all.
            if let Some((os, implied_arch, label)) = env.runs_on.as_ref().and_then(runs_on::implied)
            {
                if let Some(want) = env.detect.as_ref().and_then(|d| d.os.as_deref())
                    && want != os
                {
                    self.error(
                        &join_key(&path, "detect.os"),
                        format!(
                            "`detect.os: {want}` contradicts `runs-on: {label}`, a {os} machine"
                        ),
                    );
                }
                if let Some(want) = &arch
                    && want != implied_arch
                {
                    self.error(
                        &join_key(&path, "detect.arch"),
                        format!("`detect.arch: {want}` contradicts `runs-on: {label}`, an {implied_arch} machine"),
                    );
                }
            }
            self.env_vars(&join_key(&path, "env"), &env.env);
            self.shard_count(&join_key(&path, "shards"), env.shards);
            self.env_names.push(name.clone());
            out.push(Environment {
                name,
                runs_on: env.runs_on.clone(),
                container: env.container.clone(),
                env: env_map(&env.env),
                shell: env.shell,
                detect: env.detect.as_ref().map(|d| Detect {
                    os: d.os.clone(),
                    arch: arch.clone().or_else(|| d.arch.clone()),
                    env: env_map(&d.env),
                    file: d.file.clone(),
                }),
                shards: env.shards.unwrap_or(1).clamp(1, MAX_SHARDS),
                enter: self.enter(&join_key(&path, "enter"), env),
            });
        }
        out
    }

    fn policy(&mut self, raw: &RawManifest) -> Policy {
        let mut deny = Vec::new();
        for (i, pattern) in raw.policy.deny.iter().enumerate() {
            match regex::Regex::new(pattern) {
                Ok(re) => deny.push(re),
                Err(e) => {
                    let detail = e.to_string();
                    let last = detail.lines().last().unwrap_or("").trim();
                    let last = last.strip_prefix("error: ").unwrap_or(last);
                    self.error(
                        &join_index("policy.deny", i),
                        format!("invalid regex `{pattern}`: {last}"),
                    )
                }
            }
        }
        Policy {
            deny,
            allow_watch: raw.policy.allow_watch,
        }
    }

    /// `redact:`: variable names, and patterns that compile and mask something but
    /// not everything (a pattern matching the empty string, or every line, is refused).
    fn redact(&mut self, raw: &RawManifest) -> Redact {
        let Some(redact) = &raw.redact else {
            return Redact::default();
        };
        for (i, name) in redact.env.iter().enumerate() {
            if name.trim().is_empty() || name.contains('=') {
                self.error(
                    &join_index("redact.env", i),
                    format!("`{name}` is not a variable's name"),
                );
            }
        }
        let mut patterns = Vec::new();
        for (i, pattern) in redact.patterns.iter().enumerate() {
            let at = join_index("redact.patterns", i);
            match regex::Regex::new(pattern) {
                Ok(re) if re.is_match("") => self.error(
                    &at,
                    format!("`{pattern}` matches the empty string: it would mask between every two characters"),
                ),
                Ok(re)
                    if ["x", "hello world", "12345", "  indented", "ERROR: it failed"]
                        .iter()
                        .all(|line| re.is_match(line)) =>
                {
                    self.error(
                        &at,
                        format!("`{pattern}` matches every line: it would mask the whole log"),
                    )
                }
                Ok(re) => patterns.push(re),
                Err(e) => {
                    let detail = e.to_string();
                    let last = detail.lines().last().unwrap_or("").trim();
                    let last = last.strip_prefix("error: ").unwrap_or(last);
                    self.error(&at, format!("invalid regex `{pattern}`: {last}"))
                }
            }
        }
        Redact {
            env: redact.env.clone(),
            patterns,
        }
    }

    /// `hook:`: the checks it names are defined, the environments declared.
    fn hook(&mut self, raw: &RawManifest, ids: &HashSet<&str>) -> Hook {
        let Some(hook) = &raw.hook else {
            return Hook::default();
        };
        let mut checks = Vec::new();
        for (i, id) in hook.checks.iter().flatten().enumerate() {
            if ids.contains(id.as_str()) {
                checks.push(CheckId(id.clone()));
                continue;
            }
            let hint = match did_you_mean(id, ids.iter().copied()) {
                Some(best) => format!(" (did you mean `{best}`?)"),
                None => String::new(),
            };
            self.error(
                &join_index("hook.checks", i),
                format!("check `{id}` is not defined{hint}"),
            );
        }
        if hook.checks.as_ref().is_some_and(Vec::is_empty) {
            self.error(
                "hook.checks",
                "`checks` is an empty list; leave it out to run every check",
            );
        }
        let mut environments = Vec::new();
        for (i, name) in hook.environments.iter().flatten().enumerate() {
            let name = EnvName(name.clone());
            if self.declared(&join_index("hook.environments", i), &name) {
                environments.push(name);
            }
        }
        let max_blocks = hook.max_blocks.unwrap_or(super::model::DEFAULT_MAX_BLOCKS);
        if !(1..=100).contains(&max_blocks) {
            self.error(
                "hook.max-blocks",
                format!("max-blocks must be from 1 to 100, not {max_blocks}"),
            );
        }
        Hook {
            checks,
            environments,
            max_blocks,
        }
    }

    fn scope(&mut self, path: &str, check: &RawCheck) -> EnvScope {
        let Some(selector) = &check.environment else {
            return EnvScope::All;
        };
        let env_path = join_key(path, "environment");
        if selector.0.is_empty() {
            self.error(
                &env_path,
                "`environment` is an empty list; use ALL or name environments",
            );
            return EnvScope::All;
        }
        if selector.0.iter().any(|n| n == "ALL") {
            if selector.0.len() > 1 {
                self.error(&env_path, "`ALL` cannot be combined with other names");
            }
            return EnvScope::All;
        }
        let mut names = Vec::new();
        for (i, name) in selector.0.iter().enumerate() {
            let at = if selector.0.len() == 1 && self.spans.get(&join_index(&env_path, 0)).is_none()
            {
                env_path.clone()
            } else {
                join_index(&env_path, i)
            };
            let name = EnvName(name.clone());
            if self.declared(&at, &name) && !names.contains(&name) {
                names.push(name);
            }
        }
        EnvScope::Only(names)
    }

    /// Whether `name` (at `at`) is a declared environment; when it is not, says so with
    /// the likely one meant. Names are not judged when `environments` did not parse.
    fn declared(&mut self, at: &str, name: &EnvName) -> bool {
        if self.env_names.contains(name) || !self.environments_known {
            return true;
        }
        let declared: Vec<&str> = self.env_names.iter().map(EnvName::as_str).collect();
        let hint = match did_you_mean(name.as_str(), declared.iter().copied()) {
            Some(best) => format!(" (did you mean `{best}`?)"),
            None => String::new(),
        };
        self.error(
            at,
            format!(
                "environment `{name}` is not declared{hint}; declared: {}",
                if declared.is_empty() {
                    "none".to_owned()
                } else {
                    declared.join(", ")
                }
            ),
        );
        false
    }
}

fn env_map(raw: &Option<BTreeMap<String, EnvValue>>) -> BTreeMap<String, String> {
    raw.iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.0.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_valid_name("unit_tests"));
        assert!(is_valid_name("rust-1.85"));
        assert!(!is_valid_name("-x"));
        assert!(!is_valid_name(""));
        assert!(!is_valid_name("a b"));
        assert!(is_valid_name(&"a".repeat(MAX_NAME_CHARS)));
        assert!(!is_valid_name(&"a".repeat(MAX_NAME_CHARS + 1)));
    }
}
