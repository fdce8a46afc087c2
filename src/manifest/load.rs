//! Finding and reading the manifest: a YAML file, or Cargo.toml metadata.
//!
//! serde_yaml is archived upstream; it is used only in [`parse_yaml_text`] so that a
//! maintained fork can replace it in one place.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::aot;
use super::diagnostic::{self, Diagnostic};
use super::digest::digest;
use super::error::ManifestError;
use super::files::{NamedFiles, WorkingTree};
use super::guard;
use super::model::Manifest;
use super::parse;
use super::spans::{Pos, Spans};
use super::steps;
use super::validate::validate;

/// The contract a manifest file is written in (`--dialect`): `auto` tells it from the
/// content (a hub task has `verification_steps`, an AoT base case `base_case` or
/// `checklist`; anything else is a manifest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Dialect {
    #[default]
    Auto,
    // A `verify-matrix.yml` manifest.
    #[value(name = "verify-matrix")]
    Manifest,
    // The hub's task with `verification_steps`.
    Steps,
    // The AoT loop's `base_case` (also its state file's front matter).
    Aot,
}

/// File names searched for, in each folder from the current one up to the repository root.
pub const FILE_NAMES: &[&str] = &[
    "verify-matrix.yml",
    "verify-matrix.yaml",
    ".github/verify-matrix.yml",
];

/// Loads the manifest at `path`, or searches for one from `start` (see [`discover`]).
pub fn load(path: Option<&Path>, start: &Path) -> Result<Manifest, ManifestError> {
    load_as(path, start, Dialect::Auto)
}

/// [`load`], the file read in `dialect`.
pub fn load_as(
    path: Option<&Path>,
    start: &Path,
    dialect: Dialect,
) -> Result<Manifest, ManifestError> {
    let yaml = |path: &Path| {
        let text = guard::read_text(path)?;
        from_text_as(path, &text, dialect)
    };
    match path {
        Some(path) if path.file_name().is_some_and(|n| n == "Cargo.toml") => load_cargo(path),
        Some(path) => yaml(path),
        None => match discover(start)? {
            Found::Yaml(path) => yaml(&path),
            Found::Cargo(path) => load_cargo(&path),
        },
    }
}

/// Where a manifest was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    Yaml(PathBuf),
    Cargo(PathBuf),
}

/// Searches from `start` up to the repository root (the first folder holding `.git`) for
/// one of [`FILE_NAMES`]; failing that, the nearest Cargo.toml with a
/// `[workspace.metadata.verify-matrix]` or `[package.metadata.verify-matrix]` table.
pub fn discover(start: &Path) -> Result<Found, ManifestError> {
    let mut searched = Vec::new();
    let mut nearest_cargo = None;
    for dir in start.ancestors() {
        for name in FILE_NAMES {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(Found::Yaml(relative_to(&candidate, start)));
            }
        }
        searched.push(dir.to_path_buf());
        if nearest_cargo.is_none() && dir.join("Cargo.toml").is_file() {
            nearest_cargo = Some(dir.join("Cargo.toml"));
        }
        if dir.join(".git").exists() {
            break;
        }
    }
    if let Some(cargo) = nearest_cargo
        && cargo_has_table(&cargo)
    {
        return Ok(Found::Cargo(relative_to(&cargo, start)));
    }
    Err(ManifestError::NotFound {
        start: start.to_path_buf(),
        top: searched
            .last()
            .cloned()
            .unwrap_or_else(|| start.to_path_buf()),
    })
}

/// A cheap look before asking cargo: does the file mention the table at all?
fn cargo_has_table(path: &Path) -> bool {
    crate::untrusted::read_regular(path, guard::MAX_MANIFEST_BYTES)
        .ok()
        .flatten()
        .is_some_and(|bytes| String::from_utf8_lossy(&bytes).contains("metadata.verify-matrix"))
}

fn relative_to(path: &Path, base: &Path) -> PathBuf {
    path.strip_prefix(base)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf())
}

/// Loads a YAML manifest file.
pub fn load_yaml_file(path: &Path) -> Result<Manifest, ManifestError> {
    let text = guard::read_text(path)?;
    from_yaml_text(path, &text)
}

/// Parses and validates YAML manifest text read from `path`.
pub fn from_yaml_text(path: &Path, text: &str) -> Result<Manifest, ManifestError> {
    from_text_as(path, text, Dialect::Auto)
}

/// [`from_yaml_text`] in `dialect`. A Markdown file (`.md`) is read by its YAML front
/// matter.
pub fn from_text_as(path: &Path, text: &str, dialect: Dialect) -> Result<Manifest, ManifestError> {
    from_text_in(path, text, dialect, None)
}

/// [`from_text_as`], the files the manifest names read from `files` (else from the
/// working tree, under the manifest's folder).
pub fn from_text_in(
    path: &Path,
    text: &str,
    dialect: Dialect,
    files: Option<&dyn NamedFiles>,
) -> Result<Manifest, ManifestError> {
    let text = guard::strip_bom(text);
    let front;
    let text = if aot::is_markdown(path) {
        front = aot::front_matter(text).ok_or_else(|| {
            let message = "a Markdown manifest is read by its YAML front matter (between two `---` lines at the top), and this file has none";
            invalid(path, text, vec![Diagnostic::new("", message, Some(Pos { line: 1, col: 1, len: 1 }))])
        })?;
        front.as_str()
    } else {
        text
    };
    let invalid = |diagnostics: Vec<Diagnostic>| invalid(path, text, diagnostics);
    let refuse = |message: &str| invalid(vec![Diagnostic::new("", message, None)]);
    guard::check_nesting(text).map_err(|d| invalid(vec![d]))?;
    let spans = Spans::from_yaml(text);
    let content = parse_yaml_text(text, &spans).map_err(|d| invalid(vec![d]))?;
    let dialect = match dialect {
        Dialect::Auto if steps::is_steps(&content) => Dialect::Steps,
        Dialect::Auto if aot::is_aot(&content) => Dialect::Aot,
        Dialect::Auto => Dialect::Manifest,
        given => given,
    };
    // The other contracts are readers: what they say becomes a manifest, validated as
    // one (positions of their own problems are in their own text).
    let content = match dialect {
        Dialect::Steps if !steps::is_steps(&content) => {
            return Err(refuse(
                "--dialect steps: not a hub task (no `verification_steps`, `skip_verification` or `verification_timeout_ms`, or it has a `version`)",
            ));
        }
        Dialect::Steps => steps::to_manifest(&content, &spans).map_err(invalid)?,
        Dialect::Aot => {
            let Some((case, at)) = aot::locate(&content) else {
                return Err(refuse(
                    "--dialect aot: no base case (`base_case` at the top or under `objective`, or a bare `checklist` or `type` and `value`; and no `version`)",
                ));
            };
            aot::to_manifest(
                &aot::read(case, at, &spans).map_err(invalid)?,
                aot::checks_folder(path),
            )
        }
        Dialect::Auto | Dialect::Manifest => {
            return build(path, content, &spans, files).map_err(invalid);
        }
    };
    build(path, content, &Spans::default(), files).map_err(invalid)
}

/// Whether line `line` (from 1) of `text` holds a tab at column `col` (from 1, or from
/// 0: either side of the place an error points at).
fn tab_at(text: &str, line: usize, col: usize) -> bool {
    text.lines().nth(line.saturating_sub(1)).is_some_and(|l| {
        let chars: Vec<char> = l.chars().collect();
        [col, col.saturating_sub(1)]
            .iter()
            .any(|&i| chars.get(i) == Some(&'\t'))
    })
}

/// YAML text → JSON value, with serde_yaml's own position for a syntax error.
fn parse_yaml_text(text: &str, spans: &Spans) -> Result<Value, Diagnostic> {
    let yaml: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| {
        let message = e.to_string();
        if message.contains("duplicate entry")
            && let Some((path, pos)) = spans.first_duplicate()
        {
            let key = path.rsplit('.').next().unwrap_or(path);
            return Diagnostic::new(path, format!("duplicate key `{key}`"), Some(pos));
        }
        let message = match message.find(" at line ") {
            Some(i) => message[..i].to_owned(),
            None => message,
        };
        let pos = e.location().map(|l| Pos {
            line: l.line(),
            col: l.column(),
            len: 1,
        });
        // serde_yaml gives no position for these: find the place in the text.
        let (message, pos) = if message.contains("more than one document") {
            (
                "a manifest is one YAML document, but a second one starts here".to_owned(),
                pos.or(spans.second_document),
            )
        } else if message.contains("repetition limit") || message.contains("recursion limit") {
            (
                format!("{message}: aliases expand to too much"),
                pos.or(spans.first_alias),
            )
        } else if message.contains("cannot start any token")
            && pos.is_some_and(|p| tab_at(text, p.line, p.col))
        {
            (
                format!("{message}: a tab; YAML indents with spaces only"),
                pos,
            )
        } else if message.contains("mapping values are not allowed") {
            (
                format!(
                    "{message}: `: ` inside a plain value starts a mapping; quote the value (`run: 'echo a: b'`) or write it as a block (`run: |` and the command on the next line)"
                ),
                pos,
            )
        } else {
            (message, pos)
        };
        Diagnostic::new("", format!("invalid YAML: {message}"), pos)
    })?;
    serde_json::to_value(&yaml).map_err(|e| {
        let message = if e.to_string().contains("key must be a string") {
            "a key must be a name, not a list or a mapping".to_owned()
        } else {
            e.to_string()
        };
        Diagnostic::new(
            "",
            format!("unsupported YAML: {message}"),
            spans.complex_key,
        )
    })
}

/// The manifest in the text of a Cargo.toml read from `path` (a commit's copy, where
/// cargo cannot be asked): its `[workspace.metadata.verify-matrix]` table, else
/// `[package.metadata.verify-matrix]`.
pub fn from_cargo_toml_text(path: &Path, text: &str) -> Result<Manifest, ManifestError> {
    from_cargo_toml_text_in(path, text, None)
}

/// [`from_cargo_toml_text`], the files the manifest names read from `files` (else from
/// the working tree).
pub fn from_cargo_toml_text_in(
    path: &Path,
    text: &str,
    files: Option<&dyn NamedFiles>,
) -> Result<Manifest, ManifestError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| ManifestError::CargoMetadata {
        path: path.to_path_buf(),
        message: e.message().to_owned(),
    })?;
    let content = ["workspace", "package"]
        .iter()
        .find_map(|section| {
            table
                .get(*section)?
                .get("metadata")?
                .get("verify-matrix")
                .cloned()
        })
        .ok_or_else(|| ManifestError::NoCargoTable {
            path: path.to_path_buf(),
        })?;
    let content = serde_json::to_value(content).map_err(|e| ManifestError::CargoMetadata {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    build(path, content, &Spans::default(), files).map_err(|d| invalid(path, text, d))
}

/// Validates manifest content already in JSON form (the copy embedded in a result file).
pub fn from_embedded(path: &Path, content: Value) -> Result<Manifest, ManifestError> {
    let text = serde_json::to_string_pretty(&content).unwrap_or_default();
    build(path, content, &Spans::default(), None).map_err(|d| invalid(path, &text, d))
}

fn load_cargo(cargo_toml: &Path) -> Result<Manifest, ManifestError> {
    let metadata = cargo_metadata::MetadataCommand::new()
        .manifest_path(cargo_toml)
        .no_deps()
        .exec()
        .map_err(|e| ManifestError::CargoMetadata {
            path: cargo_toml.to_path_buf(),
            message: e.to_string(),
        })?;
    let from_workspace = metadata.workspace_metadata.get("verify-matrix").cloned();
    let canonical = std::fs::canonicalize(cargo_toml).ok();
    let from_package = || {
        metadata
            .packages
            .iter()
            .find(|p| canonical.as_deref() == Some(p.manifest_path.as_std_path()))
            .and_then(|p| p.metadata.get("verify-matrix").cloned())
    };
    let content =
        from_workspace
            .or_else(from_package)
            .ok_or_else(|| ManifestError::NoCargoTable {
                path: cargo_toml.to_path_buf(),
            })?;
    let text = guard::read_text(cargo_toml)?;
    build(cargo_toml, content, &Spans::default(), None).map_err(|mut d| {
        // TOML positions are not mapped; point at the table header and say the key path.
        let header = text
            .lines()
            .position(|l| l.contains("metadata.verify-matrix"))
            .map(|i| Pos {
                line: i + 1,
                col: 1,
                len: 1,
            });
        for diag in &mut d {
            diag.pos = diag.pos.or(header);
        }
        invalid(cargo_toml, &text, d)
    })
}

fn build(
    path: &Path,
    content: Value,
    spans: &Spans,
    files: Option<&dyn NamedFiles>,
) -> Result<Manifest, Vec<Diagnostic>> {
    let (parsed, mut diagnostics) = parse::deserialize(&content, spans);
    let Some(parsed) = parsed else {
        return Err(diagnostics);
    };
    let valid = match validate(&parsed, &content, spans) {
        Ok(valid) if diagnostics.is_empty() => valid,
        Ok(_) => return Err(diagnostics),
        Err(more) => {
            diagnostics.extend(more);
            // In reading order, whichever step found them.
            diagnostics.sort_by_key(|d| d.pos.map_or((usize::MAX, 0), |p| (p.line, p.col)));
            return Err(diagnostics);
        }
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // `.github/verify-matrix.yml` lives below the repository root it describes.
    let dir = if dir.file_name().is_some_and(|n| n == ".github") {
        dir.parent()
            .map(Path::to_path_buf)
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or_else(|| PathBuf::from("."))
    } else {
        dir
    };
    let mut environments = valid.environments;
    let tree = WorkingTree::new(&dir);
    let files = files.unwrap_or(&tree);
    let problems = super::validate::resolve_enter_files(&mut environments, files, spans);
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Manifest {
        path: path.to_path_buf(),
        dir,
        digest: digest(&content),
        content,
        environments,
        checks: valid.checks,
        defaults: valid.defaults,
        run_timeout: valid.run_timeout,
        policy: valid.policy,
        redact: valid.redact,
        skip: valid.skip,
        fail_on: valid.fail_on,
        hook: valid.hook,
        history: valid.history,
    })
}

fn invalid(path: &Path, text: &str, diagnostics: Vec<Diagnostic>) -> ManifestError {
    let file = path.display().to_string();
    ManifestError::Invalid {
        count: diagnostics.len(),
        rendered: diagnostic::render(&file, text, &diagnostics),
        diagnostics,
    }
}
