//! Reports a workflow already makes, read as the results of its legs: `report --files`.
//!
//! Each file a glob matches is a runner's report (JUnit XML, TRX, NUnit, xUnit.net,
//! CTRF, Jest/Vitest/Mocha/RSpec/Playwright JSON, `go test -json`, TAP) of one environment, read by
//! the readers `reports:` uses, bounded and confined to the folder the command runs in.
//! Which environment a file belongs to is said by the glob
//! (`{environment}` in it), else by `--environment` (one leg), else by the first folder
//! of its path below the glob's fixed part (the artifact folder a download put it in:
//! `artifacts/**/*.xml` reads `artifacts/linux/junit.xml` as `linux`); which check, by
//! `{check}` in
//! the glob, else the one check `tests`. The environments expected come from
//! `--environments`; one of them without a file has no result, never passes.
//!
//! The matrix judged is made of what was asked for (the expected environments and the
//! checks found), each pair judged as a check with `reports:` and `must-be-effective`:
//! it passes when its reports list at least one test that ran and none that failed.
//! Anything this cannot tell (a glob with no match, a file no reader knows, a name that is
//! not a valid environment or check name) is an error naming the glob or the file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use globset::{Glob, GlobSet, GlobSetBuilder};
use regex::Regex;

use super::reports::{self, Context, MAX_FILES, MAX_WALK, Problem, Started};
use crate::manifest::{Manifest, ReportPattern, is_valid_name};
use crate::results::{
    CheckResult, ManifestRef, Outcome, PartialResult, REPORTS_KIND, Runner, Source, Status, Tool,
    counted,
};
use crate::untrusted::redact::Redactor;

/// The check a file belongs to when the glob does not name one.
pub const DEFAULT_CHECK: &str = "tests";

pub use crate::results::FILES_MANIFEST;

/// What `report --files` was asked.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The globs, relative to `root`; those starting with `!` exclude.
    pub patterns: Vec<String>,
    /// The environments expected (`--environments`); empty: those the files name.
    pub environments: Vec<String>,
    /// Where those came from, for the message about a file of another environment
    /// (`--environments`, `the manifest's environments`).
    pub expected_from: String,
    /// The one environment every file belongs to (`--environment`).
    pub environment: Option<String>,
    /// The folder globs start in; no file outside it is read.
    pub root: PathBuf,
}

/// The results read from the files, and the matrix they are judged by.
#[derive(Debug)]
pub struct Imported {
    pub manifest: Manifest,
    pub partials: Vec<PartialResult>,
    /// What the caller should say (e.g. that no environments were given).
    pub notes: Vec<String>,
}

/// One glob to include: what it matches, and where its placeholders sit.
struct Include {
    /// As written.
    text: String,
    /// With each placeholder a `*`.
    matcher: globset::GlobMatcher,
    /// The path segment each placeholder is read from, and the segment's pattern.
    environment: Option<(usize, Regex)>,
    check: Option<(usize, Regex)>,
}

impl Include {
    fn parse(text: &str) -> Result<Include, String> {
        let glob = text.replace('\\', "/");
        if glob.starts_with('/') || glob.split('/').any(|s| s == "..") {
            return Err(format!(
                "--files `{text}`: a glob names files under the folder it runs in (no absolute path, no `..`)"
            ));
        }
        let segments: Vec<&str> = glob.split('/').collect();
        let mut environment = None;
        let mut check = None;
        let mut deep = false;
        for (i, segment) in segments.iter().enumerate() {
            for (name, slot) in [("environment", &mut environment), ("check", &mut check)] {
                let placeholder = format!("{{{name}}}");
                let times = segment.matches(&placeholder).count();
                if times == 0 {
                    continue;
                }
                if slot.is_some() || times > 1 {
                    return Err(format!(
                        "--files `{text}`: `{placeholder}` appears more than once"
                    ));
                }
                if deep {
                    return Err(format!(
                        "--files `{text}`: `{placeholder}` must come before any `**` (it is read from the same folder level in every path)"
                    ));
                }
                *slot = Some((i, segment_regex(segment, name)?));
            }
            deep |= segment.contains("**");
        }
        let plain = glob.replace("{environment}", "*").replace("{check}", "*");
        let matcher = Glob::new(&plain)
            .map_err(|e| format!("--files `{text}`: {e}"))?
            .compile_matcher();
        Ok(Include {
            text: text.to_owned(),
            matcher,
            environment,
            check,
        })
    }

    /// Whether a file the glob matches could lie under the folder `relative`: each of
    /// its parts matches the glob's part at its level, before the glob's last part (a
    /// file's) or at a `**`.
    fn could_hold(&self, relative: &str) -> bool {
        let plain = self
            .text
            .replace("{environment}", "*")
            .replace("{check}", "*");
        let globs: Vec<&str> = plain.split('/').collect();
        for (i, part) in relative.split('/').enumerate() {
            match globs.get(i) {
                Some(glob) if glob.contains("**") => return true,
                Some(glob) if i + 1 < globs.len() => {
                    let matches = Glob::new(glob)
                        .map(|g| g.compile_matcher().is_match(part))
                        // A part that is no glob of its own: it may match; refused.
                        .unwrap_or(true);
                    if !matches {
                        return false;
                    }
                }
                _ => return false,
            }
        }
        true
    }

    /// The folder the walk starts in: the glob's part before its first wildcard.
    fn base(&self) -> PathBuf {
        let mut base = PathBuf::new();
        for part in self.text.replace('\\', "/").split('/') {
            if part.contains(['*', '?', '[', '{']) {
                break;
            }
            base.push(part);
        }
        // A glob without wildcards names one file: walk its folder.
        if !self.text.contains(['*', '?', '[', '{']) {
            base.pop();
        }
        base
    }
}

/// A regex for one path segment holding a placeholder: its wildcards as in the glob,
/// the placeholder as a capture of at least one character.
fn segment_regex(segment: &str, name: &str) -> Result<Regex, String> {
    let placeholder = format!("{{{name}}}");
    let mut pattern = String::from("^");
    for (i, part) in segment.split(&placeholder).enumerate() {
        if i > 0 {
            pattern.push_str("(?P<value>.+)");
        }
        let mut literal = String::new();
        for c in part.chars() {
            match c {
                '*' => {
                    pattern.push_str(&regex::escape(&literal));
                    literal.clear();
                    // Lazier than the name: `{environment}*` takes the whole folder name.
                    pattern.push_str(".*?");
                }
                '?' => {
                    pattern.push_str(&regex::escape(&literal));
                    literal.clear();
                    pattern.push('.');
                }
                '[' | '{' => {
                    return Err(format!(
                        "`{segment}`: a folder level with `{placeholder}` may use `*` and `?`, not `[…]` or `{{…}}`"
                    ));
                }
                c => literal.push(c),
            }
        }
        pattern.push_str(&regex::escape(&literal));
    }
    pattern.push('$');
    Regex::new(&pattern).map_err(|e| format!("`{segment}`: {e}"))
}

/// The most environments expected (GitHub's matrix allows 256 jobs).
const MAX_EXPECTED: usize = 1000;

/// The environments expected, as `--environments` gives them: names (commas split them),
/// or one JSON value: an array of names (`${{ toJSON(matrix.python) }}`; numbers are
/// taken as written), or the plan's matrix (`{"include": [{"environment": …}, …]}`, its
/// shards one environment). Repeats are one environment.
pub fn expected_list(values: &[String]) -> Result<Vec<String>, String> {
    if values.is_empty() {
        return Ok(Vec::new());
    }
    let joined = values.join(",");
    let trimmed = joined.trim();
    let names: Vec<String> = if trimmed.starts_with('[') || trimmed.starts_with('{') {
        let value: serde_json::Value = serde_json::from_str(trimmed).map_err(|e| {
            format!(
                "--environments `{}`: not a JSON array of names or a plan's matrix: {e}",
                crate::untrusted::cut(trimmed, 80)
            )
        })?;
        let items = match &value {
            serde_json::Value::Array(items) => items,
            // A plan's matrix is its `include` list, nothing else: a matrix of other
            // keys (`{"python": [...]}`) makes legs this list would not name.
            serde_json::Value::Object(map) => match map.get("include") {
                Some(serde_json::Value::Array(items)) if map.len() == 1 => items,
                _ => {
                    return Err(
                        "--environments: a JSON object must be a plan's matrix, `{\"include\": [{\"environment\": …}]}` and nothing else"
                            .to_owned(),
                    );
                }
            },
            _ => unreachable!("starts with `[` or `{{`"),
        };
        items
            .iter()
            .map(|item| match item {
                serde_json::Value::String(name) => Ok(name.clone()),
                serde_json::Value::Number(n) => Ok(n.to_string()),
                // A shard is a leg of this tool's own run, which --files cannot tell
                // apart: report those legs' results instead.
                serde_json::Value::Object(entry) if entry.contains_key("shard") => Err(format!(
                    "--environments: the matrix entry {} is a shard: a sharded plan's legs are reported from their results, not with --files",
                    crate::untrusted::cut(&item.to_string(), 80)
                )),
                serde_json::Value::Object(entry) => match entry.get("environment") {
                    Some(serde_json::Value::String(name)) => Ok(name.clone()),
                    _ => Err(format!(
                        "--environments: the matrix entry {} names no `environment`",
                        crate::untrusted::cut(&item.to_string(), 80)
                    )),
                },
                other => Err(format!(
                    "--environments: `{}` is not an environment's name",
                    crate::untrusted::cut(&other.to_string(), 80)
                )),
            })
            .collect::<Result<_, _>>()?
    } else {
        values
            .iter()
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .collect()
    };
    // Given, but naming none: nothing would be expected, and any files would pass.
    if names.is_empty() {
        return Err(format!(
            "--environments `{}` names no environment: give the legs expected (or leave the flag out to judge the environments the files name)",
            crate::untrusted::cut(trimmed, 80)
        ));
    }
    let mut seen = std::collections::HashSet::with_capacity(names.len());
    let unique: Vec<String> = names
        .into_iter()
        .filter(|name| seen.insert(name.clone()))
        .collect();
    if unique.len() > MAX_EXPECTED {
        return Err(format!(
            "--environments: {} environments, at most {MAX_EXPECTED}",
            unique.len()
        ));
    }
    Ok(unique)
}

/// The environments the run's jobs `job` were legs of, as GitHub names matrix jobs:
/// `JOB (a, b)` (GitHub's name) or `JOB: [a, b]` (GitLab's) is the environment `a-b`
/// (the matrix's values in order, joined by `-`, as artifact names are usually made of
/// them). With `{environment}` in `job`, a job's
/// whole name is matched against it (`Test {environment}` reads `Test 3.11` as `3.11`).
/// Every such job is expected, whatever became of it: a skipped or cancelled leg is one
/// with no file.
pub fn environments_of_jobs<'a>(
    job: &str,
    names: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<String>, String> {
    // Each environment, with the job name it came from: two legs never make one.
    let mut found: Vec<(String, &str)> = Vec::new();
    let mut seen = Vec::new();
    for name in names {
        if seen.len() < 20 && !seen.contains(&name) {
            seen.push(name);
        }
        let environment = match job.split_once("{environment}") {
            Some((before, after)) => name
                .strip_prefix(before)
                .and_then(|rest| rest.strip_suffix(after))
                .map(str::to_owned),
            None => name.strip_prefix(job).and_then(|rest| {
                rest.strip_prefix(" (")
                    .and_then(|rest| rest.strip_suffix(')'))
                    .map(|inside| inside.split(", ").collect::<Vec<_>>().join("-"))
                    // GitLab's `JOB: [a, b]`.
                    .or_else(|| {
                        rest.strip_prefix(": [")
                            .and_then(|rest| rest.strip_suffix(']'))
                            .map(|inside| {
                                inside
                                    .split(',')
                                    .map(str::trim)
                                    .collect::<Vec<_>>()
                                    .join("-")
                            })
                    })
            }),
        };
        let Some(environment) = environment else {
            continue;
        };
        if environment.is_empty() {
            return Err(format!(
                "--environments-from-job `{job}`: the job `{}` names no environment",
                crate::untrusted::cut(name, 100)
            ));
        }
        match found.iter().find(|(env, _)| *env == environment) {
            // A re-run's job is listed again under its name: the same leg.
            Some((_, from)) if *from == name => {}
            Some((_, from)) => {
                return Err(format!(
                    "--environments-from-job `{job}`: the jobs `{}` and `{}` both read as the environment `{}`: two legs cannot be told apart",
                    crate::untrusted::cut(from, 100),
                    crate::untrusted::cut(name, 100),
                    crate::untrusted::cut(&environment, 100)
                ));
            }
            None => found.push((environment, name)),
        }
    }
    if found.is_empty() {
        return Err(format!(
            "--environments-from-job `{job}`: no job of this run is {}; its jobs: {}",
            if job.contains("{environment}") {
                format!("named `{job}`")
            } else {
                format!("a leg of matrix job `{job}` (named `{job} (…)`)")
            },
            if seen.is_empty() {
                "none".to_owned()
            } else {
                seen.iter()
                    .map(|n| format!("`{}`", crate::untrusted::cut(n, 100)))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
    }
    Ok(found
        .into_iter()
        .map(|(environment, _)| environment)
        .collect())
}

/// Reads the files `spec` names: the results of each environment, and the matrix.
pub fn import(spec: &Spec, source: &Source, redactor: Arc<Redactor>) -> Result<Imported, String> {
    let (includes, excludes) = parse_patterns(&spec.patterns)?;
    if spec.environment.is_some() && includes.iter().any(|i| i.environment.is_some()) {
        return Err(
            "--environment and `{environment}` in a glob both name the environment: give one"
                .to_owned(),
        );
    }
    for name in spec.environments.iter().chain(&spec.environment) {
        if !is_valid_name(name) || name == "ALL" {
            return Err(format!(
                "`{name}` is not a valid environment name (ASCII letters, digits, `-`, `_` and `.`, starting with a letter or digit, at most 100)"
            ));
        }
    }
    let root =
        std::fs::canonicalize(&spec.root).map_err(|e| format!("{}: {e}", spec.root.display()))?;
    // Each file's (environment, check), from the glob that matched it first.
    let mut files: BTreeMap<String, (String, String)> = BTreeMap::new();
    for include in &includes {
        let (matched, excluded) = walk(include, &root, &excludes)?;
        if matched.is_empty() {
            return Err(format!(
                "--files `{}` matched no file under {}{}",
                include.text,
                root.display(),
                if excluded > 0 {
                    format!(" ({excluded} matched and were excluded by a `!` glob)")
                } else {
                    String::new()
                }
            ));
        }
        let base = include.base();
        for relative in matched {
            if files.contains_key(&relative) {
                continue;
            }
            let environment = name_of(include.environment.as_ref(), &relative, "environment")?
                .or_else(|| spec.environment.clone())
                .or_else(|| first_folder(&base, &relative))
                .ok_or_else(|| {
                    format!(
                        "`{relative}`: which environment it is cannot be told: put `{{environment}}` in the glob, download each leg's artifact into its own folder, or give --environment"
                    )
                })?;
            // A folder's name is a name only if it is a valid one (`ALL` means every
            // environment to a manifest).
            if !is_valid_name(&environment) || environment == "ALL" {
                return Err(format!(
                    "`{relative}`: `{environment}` is not a valid environment name (ASCII letters, digits, `-`, `_` and `.`, starting with a letter or digit, at most 100; not `ALL`)"
                ));
            }
            let check = name_of(include.check.as_ref(), &relative, "check")?
                .unwrap_or_else(|| DEFAULT_CHECK.to_owned());
            if !spec.environments.is_empty() && !spec.environments.contains(&environment) {
                return Err(format!(
                    "`{relative}`: its environment `{environment}` is not one of the environments expected, {}: {}",
                    spec.expected_from,
                    spec.environments.join(", ")
                ));
            }
            files.insert(relative, (environment, check));
            if files.len() > MAX_FILES {
                return Err(format!(
                    "--files: more than {MAX_FILES} files match; narrow the globs"
                ));
            }
        }
    }
    let mut notes = Vec::new();
    let environments: Vec<String> = if spec.environments.is_empty() {
        let found: BTreeSet<&String> = files.values().map(|(e, _)| e).collect();
        notes.push(format!(
            "the environments expected were not given (--environments): judged over the {} the files name ({}); a leg that left no file is not noticed",
            found.len(),
            found.iter().map(|e| e.as_str()).collect::<Vec<_>>().join(", ")
        ));
        found.into_iter().cloned().collect()
    } else {
        let mut seen = BTreeSet::new();
        spec.environments
            .iter()
            .filter(|e| seen.insert(e.as_str()))
            .cloned()
            .collect()
    };
    let checks: BTreeSet<&String> = files.values().map(|(_, c)| c).collect();
    let manifest = matrix(&environments, &checks)?;
    let context = Context {
        cwd: root.clone(),
        root: root.clone(),
        // The files were written before this command, by legs that ran elsewhere.
        started: Started::at(std::time::SystemTime::UNIX_EPOCH),
        redactor,
    };
    let mut partials = Vec::new();
    for environment in &environments {
        let mut results = Vec::new();
        for check in &manifest.checks {
            let mine: Vec<String> = files
                .iter()
                .filter(|(_, (e, c))| e == environment && c.as_str() == check.id.as_str())
                .map(|(path, _)| path.clone())
                .collect();
            if mine.is_empty() {
                continue;
            }
            results.push(Box::new(judged(check, environment, &mine, &context)));
        }
        // An environment expected and without a file has no result at all.
        if results.is_empty() {
            continue;
        }
        partials.push(PartialResult {
            format_version: crate::results::FORMAT_VERSION,
            tool: Tool::current(),
            manifest: ManifestRef {
                path: manifest.path.display().to_string(),
                digest: manifest.digest.clone(),
                content: (&manifest.content).into(),
            },
            environment: environment.clone(),
            shard: None,
            source: source.clone(),
            // Where the legs ran is not known from a report.
            runner: Runner::default(),
            started_at: crate::results::source::now_rfc3339(),
            finished_at: Some(crate::results::source::now_rfc3339()),
            duration_ms: results.iter().map(|r| r.duration_ms).sum(),
            outcome: Outcome::Complete,
            checks: results,
            held: None,
        });
    }
    Ok(Imported {
        manifest,
        partials,
        notes,
    })
}

/// `glob` with `/` between its parts and no `.` part (`./reports/*.xml` is
/// `reports/*.xml`, as the paths it is matched against are written).
fn without_dots(glob: &str) -> String {
    let glob = glob.replace('\\', "/");
    let parts: Vec<&str> = glob.split('/').filter(|part| *part != ".").collect();
    parts.join("/")
}

/// The includes and the excluding set of `patterns`.
fn parse_patterns(patterns: &[String]) -> Result<(Vec<Include>, GlobSet), String> {
    let mut includes = Vec::new();
    let mut excludes = GlobSetBuilder::new();
    for pattern in patterns.iter().flat_map(|p| p.lines()).map(str::trim) {
        if pattern.is_empty() || pattern.starts_with('#') {
            continue;
        }
        match pattern.strip_prefix('!') {
            Some(exclude) => {
                let glob = without_dots(exclude)
                    .replace("{environment}", "*")
                    .replace("{check}", "*");
                excludes.add(Glob::new(&glob).map_err(|e| format!("--files `{pattern}`: {e}"))?);
            }
            None => includes.push(Include::parse(&without_dots(pattern))?),
        }
    }
    if includes.is_empty() {
        return Err("--files: no glob to match (only exclusions, or nothing)".to_owned());
    }
    let excludes = excludes
        .build()
        .map_err(|e| format!("--files: the exclusions: {e}"))?;
    Ok((includes, excludes))
}

/// The regular files under `root` that `include` matches and no exclusion does, as
/// paths relative to `root` with `/`, in path order. Links are not followed: a link a
/// glob matches is refused, as is any path that leads outside `root`.
fn walk(
    include: &Include,
    root: &Path,
    excludes: &GlobSet,
) -> Result<(Vec<String>, usize), String> {
    let start = root.join(include.base());
    if let Ok(real) = std::fs::canonicalize(&start)
        && real != start
    {
        return Err(format!(
            "`{}` is reached through a symbolic link: a report is read only where it is",
            include.base().display()
        ));
    }
    let mut found = Vec::new();
    let mut excluded = 0;
    for (seen, entry) in walkdir::WalkDir::new(&start)
        .follow_links(false)
        .follow_root_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git")
        .enumerate()
    {
        if seen >= MAX_WALK {
            return Err(format!(
                "--files `{}` searched more than {MAX_WALK} folder entries; narrow it",
                include.text
            ));
        }
        let Ok(entry) = entry else { continue };
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let relative = relative.to_string_lossy().replace('\\', "/");
        // A link to a folder is never walked into, and what it holds could match: a
        // report behind it is never passed over unseen. Refused, unless excluded.
        if entry.path_is_symlink()
            && std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir())
            && include.could_hold(&relative)
            && !excludes.is_match(&relative)
        {
            return Err(format!(
                "`{relative}` is a symbolic link to a folder, under the glob `{}`: a report is read only where it is (remove the link, or exclude it with `!{relative}`)",
                include.text
            ));
        }
        if !include.matcher.is_match(&relative) {
            continue;
        }
        if excludes.is_match(&relative) {
            excluded += 1;
            continue;
        }
        if entry.path_is_symlink() {
            return Err(format!(
                "`{relative}` is a symbolic link: a report is read only as a file of its own"
            ));
        }
        if !entry.file_type().is_file() {
            continue;
        }
        // Each file is read by its own path: one that reads as a glob is refused.
        if relative.contains(['*', '?', '[', ']', '{', '}']) {
            return Err(format!(
                "`{relative}`: a report's path may not hold `*`, `?`, `[`, `]`, `{{` or `}}`"
            ));
        }
        // A folder on the way that is a link (the glob's own fixed part included) would
        // make one environment's file another's.
        let real = std::fs::canonicalize(entry.path()).map_err(|e| format!("`{relative}`: {e}"))?;
        if real != root.join(&relative) {
            return Err(format!(
                "`{relative}` is reached through a symbolic link: a report is read only where it is"
            ));
        }
        found.push(relative);
    }
    Ok((found, excluded))
}

/// The value a placeholder takes in `relative`, checked as a name; `None` without one.
fn name_of(
    placeholder: Option<&(usize, Regex)>,
    relative: &str,
    what: &str,
) -> Result<Option<String>, String> {
    let Some((index, regex)) = placeholder else {
        return Ok(None);
    };
    let value = relative
        .split('/')
        .nth(*index)
        .and_then(|segment| regex.captures(segment))
        .and_then(|c| c.name("value"))
        .map(|m| m.as_str().to_owned())
        .ok_or_else(|| format!("`{relative}`: no {what} name where the glob puts `{{{what}}}`"))?;
    if !is_valid_name(&value) {
        return Err(format!(
            "`{relative}`: `{value}` is not a valid {what} name (ASCII letters, digits, `-`, `_` and `.`, starting with a letter or digit, at most 100)"
        ));
    }
    Ok(Some(value))
}

/// The first folder of `relative` below the glob's `base` (where a download of every
/// artifact puts each in a folder named after it), as an environment's name.
fn first_folder(base: &Path, relative: &str) -> Option<String> {
    let base = base.to_string_lossy().replace('\\', "/");
    let below = if base.is_empty() {
        relative
    } else {
        relative.strip_prefix(&base)?.strip_prefix('/')?
    };
    let (first, _) = below.split_once('/')?;
    Some(first.to_owned())
}

/// The matrix the files are judged by: each environment, each check a test gate that
/// must be effective.
fn matrix(environments: &[String], checks: &BTreeSet<&String>) -> Result<Manifest, String> {
    let mut text = String::from("version: 1\nenvironments:\n");
    // Quoted: `3.11` or `18` are names here, never numbers.
    let quoted = |name: &str| serde_json::to_string(name).unwrap_or_default();
    for env in environments {
        text.push_str(&format!("  - name: {}\n", quoted(env)));
    }
    text.push_str("checks:\n");
    for check in checks {
        text.push_str(&format!(
            "  - id: {}\n    run: 'true'\n    gate: test\n    must-be-effective: true\n    reports: '*'\n",
            quoted(check)
        ));
    }
    crate::manifest::from_yaml_text(Path::new(FILES_MANIFEST), &text)
        .map_err(|e| format!("the matrix of the files: {}", e.one_line()))
}

/// One pair's result from its files: passed when they list at least one test that ran
/// and none that failed; an error naming the file when one cannot be read.
fn judged(
    check: &crate::manifest::Check,
    environment: &str,
    files: &[String],
    context: &Context,
) -> CheckResult {
    let mut result = CheckResult::blank(check, environment, Status::Pass, "");
    result.kind = REPORTS_KIND.into();
    result.command = format!("reports: {}", files.join(", ")).into();
    result.attempts = 1;
    let patterns: Vec<_> = files.iter().map(ReportPattern::any).collect();
    match reports::read(&patterns, context) {
        Ok(reading) => {
            let counts = reading.counts;
            let ran = counts.passed + counts.failed;
            result.exit_code = Some(i32::from(counts.failed > 0));
            result.tests_executed = Some(ran);
            result.gate_effective = Some(ran > 0);
            if ran == 0 {
                result.status = Status::Fail;
                result.ineffective_reason = Some(
                    format!(
                        "the report{} no test that ran",
                        if files.len() == 1 { " lists" } else { "s list" }
                    )
                    .into(),
                );
                result.say(&format!(
                    "ineffective: no test ran in {}",
                    counted(files.len() as u64, "file", "files")
                ));
            } else if counts.failed > 0 {
                result.status = Status::Fail;
                result.say(&format!(
                    "{} of {} failed",
                    counts.failed,
                    counted(ran, "test", "tests")
                ));
            } else {
                let flaky = if counts.flaky > 0 {
                    format!(" ({} flaky)", counts.flaky)
                } else {
                    String::new()
                };
                result.say(&format!(
                    "{} passed{flaky}",
                    counted(counts.passed, "test", "tests")
                ));
            }
            result.test_counts = Some(Box::new(counts));
            result.tests = Some(Box::new(reading.report));
        }
        Err(Problem::Missing(reason) | Problem::Unreadable(reason)) => {
            result.status = Status::Error;
            result.exit_code = None;
            result.gate_effective = Some(false);
            result.say(&reason);
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(values: &[&str]) -> Vec<String> {
        values.iter().map(|v| (*v).to_owned()).collect()
    }

    #[test]
    fn the_environments_expected_are_names_a_json_array_or_the_plans_matrix() {
        assert_eq!(
            expected_list(&strings(&["py310", " py311", "py310"])).unwrap(),
            ["py310", "py311"]
        );
        // A JSON array arrives split at its commas; `3.11` written as a number stays.
        assert_eq!(
            expected_list(&strings(&["[\"3.10\"", " 3.11", " 18]"])).unwrap(),
            ["3.10", "3.11", "18"]
        );
        let plan = r#"{"include":[{"environment":"linux","runs-on":"ubuntu-latest"},{"environment":"linux"},{"environment":"windows"}]}"#;
        let split: Vec<String> = plan.split(',').map(str::to_owned).collect();
        assert_eq!(expected_list(&split).unwrap(), ["linux", "windows"]);
        for bad in [
            "[]",
            "{\"include\": []}",
            "",
            " ",
            "{\"environment\": [\"a\", \"b\"], \"include\": [{\"environment\": \"a\"}]}",
            "{\"include\": [{\"environment\": \"a\", \"shard\": \"1/2\"}]}",
            "[\"a\", true]",
            "{\"include\": [{\"os\": \"x\"}]}",
            "{\"fail-fast\": true}",
            "[\"a\"",
        ] {
            assert!(expected_list(&[bad.to_owned()]).is_err(), "{bad} was taken");
        }
    }

    #[test]
    fn a_matrix_jobs_legs_are_its_environments_whatever_became_of_them() {
        let jobs = [
            "plan",
            "test (3.11)",
            "test (3.12)",
            "test (3.11)",
            "tests (3.13)",
            "build (ubuntu-latest, 3.11)",
            "report",
        ];
        assert_eq!(
            environments_of_jobs("test", jobs).unwrap(),
            ["3.11", "3.12"]
        );
        assert_eq!(
            environments_of_jobs("build", jobs).unwrap(),
            ["ubuntu-latest-3.11"]
        );
        assert_eq!(
            environments_of_jobs("Test on {environment}", ["Test on linux", "x"]).unwrap(),
            ["linux"]
        );
        // GitLab's names of a matrix job.
        assert_eq!(
            environments_of_jobs("test", ["test: [3.11]", "test: [3.12, slow]", "tests: [x]"])
                .unwrap(),
            ["3.11", "3.12-slow"]
        );
        // A leg named by nothing, or two legs read as one environment: refused, never
        // one leg fewer expected.
        assert!(environments_of_jobs("Test on {environment}", ["Test on a", "Test on "]).is_err());
        let error =
            environments_of_jobs("test", ["test (a, b)", "test (a-b)", "test (a, b)"]).unwrap_err();
        assert!(error.contains("two legs cannot be told apart"), "{error}");
        let error = environments_of_jobs("unit", jobs).unwrap_err();
        assert!(
            error.contains("no job of this run is a leg of matrix job `unit`")
                && error.contains("`test (3.11)`"),
            "{error}"
        );
        // A job that is not a matrix's names no environment.
        assert!(environments_of_jobs("plan", jobs).is_err());
    }

    #[test]
    fn without_a_placeholder_the_first_folder_below_the_glob_names_it() {
        let base = Include::parse("artifacts/**/*.xml").unwrap().base();
        assert_eq!(
            first_folder(&base, "artifacts/linux/x/junit.xml").as_deref(),
            Some("linux")
        );
        assert_eq!(first_folder(&base, "artifacts/junit.xml"), None);
        let base = Include::parse("*/junit.xml").unwrap().base();
        assert_eq!(first_folder(&base, "mac/junit.xml").as_deref(), Some("mac"));
    }

    #[test]
    fn placeholders_are_read_from_their_folder_level() {
        let include = Include::parse("test-results-{environment}/**/*.xml").unwrap();
        assert_eq!(include.base(), PathBuf::new());
        assert!(include.matcher.is_match("test-results-linux/a/b.xml"));
        assert_eq!(
            name_of(
                include.environment.as_ref(),
                "test-results-linux/a/b.xml",
                "environment"
            )
            .unwrap(),
            Some("linux".to_owned())
        );
        let include = Include::parse("out/{environment}/{check}.xml").unwrap();
        assert_eq!(include.base(), PathBuf::from("out"));
        assert_eq!(
            name_of(include.check.as_ref(), "out/mac/unit.xml", "check").unwrap(),
            Some("unit".to_owned())
        );
        for bad in [
            "**/{environment}/*.xml",
            "{environment}-{environment}/*.xml",
            "../x/*.xml",
            "/etc/*.xml",
            "[{environment}]/*.xml",
        ] {
            assert!(Include::parse(bad).is_err(), "{bad}");
        }
        let include = Include::parse("r-{environment}/*.xml").unwrap();
        assert!(
            name_of(include.environment.as_ref(), "r-a b/x.xml", "environment").is_err(),
            "a name with a space"
        );
    }
}
