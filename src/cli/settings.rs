//! Flags and the environment, turned once into what the commands work with (as
//! ripgrep's `HiArgs` are made from its `LowArgs`): the manifest to load, colour,
//! verbosity, the GitHub Actions context, and the render options built from them.

use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};

use super::Error;
use super::args::{ColorChoice, GlobalArgs, MatrixFlags, RenderFlags};
use crate::actions_env::ActionsEnv;
use crate::manifest::{self, Manifest};
use crate::render::{Budget, RenderOptions, SignalInfo};
use crate::results::source::detect_source;
use crate::results::{Report, Source};
use crate::untrusted::{Quoter, Redactor};

/// What every command runs with.
pub(crate) struct Settings {
    /// `--manifest`; else the manifest is searched for.
    pub manifest: Option<PathBuf>,
    /// `--dialect`: the contract the manifest is written in.
    pub dialect: manifest::Dialect,
    /// Colour on stdout.
    pub color: bool,
    /// `--quiet`.
    pub quiet: bool,
    /// `--verbose`, counted.
    pub verbose: u8,
    /// The GitHub Actions context, read once.
    pub actions: ActionsEnv,
}

impl Settings {
    /// The settings from the shared options and this process's environment.
    pub fn new(global: &GlobalArgs) -> Settings {
        Settings {
            manifest: global.manifest.manifest.clone(),
            dialect: global.manifest.dialect.unwrap_or_default(),
            color: use_color(global.color.color),
            quiet: global.quiet.quiet,
            verbose: global.verbose.verbose,
            actions: ActionsEnv::from_process(),
        }
    }

    /// The manifest: `--manifest`, else the one found from the current folder.
    pub fn load_manifest(&self) -> Result<Manifest, Error> {
        self.load_manifest_from(self.manifest.as_deref(), &current_dir()?)
    }

    /// The manifest at `path` (else the one found from `start`), in `--dialect`.
    pub fn load_manifest_from(&self, path: Option<&Path>, start: &Path) -> Result<Manifest, Error> {
        Ok(manifest::load_as(path, start, self.dialect)?)
    }

    /// Where a run happened: the Actions context, else the repository at `dir`.
    pub fn source(&self, dir: &Path) -> Source {
        detect_source(dir, &self.actions)
    }

    /// Under GitHub Actions, an `::error` annotation saying `text` (on stdout, where the
    /// runner reads workflow commands).
    pub fn annotate_error(&self, text: &str) {
        if self.actions.actions {
            println!(
                "::error title=Not this environment::{}",
                crate::cli::live::escape_data(text)
            );
        }
    }

    /// Under GitHub Actions, appends `name=value` to `$GITHUB_OUTPUT`.
    pub fn write_github_output(&self, name: &str, value: &str) -> Result<(), Error> {
        let Some(path) = self.actions.output_file() else {
            return Ok(());
        };
        let io_err = |source| Error::Io {
            context: format!("failed to write `{name}` to $GITHUB_OUTPUT"),
            source,
        };
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(io_err)?;
        writeln!(file, "{name}={value}").map_err(io_err)
    }

    /// The options of the terminal table (`run`, `report`).
    pub fn table_options(&self, report: &Report, quoter: Quoter) -> RenderOptions {
        RenderOptions {
            color: self.color,
            quoter,
            ..RenderOptions::for_report(report)
        }
    }

    /// The options the matrix flags set, with logs read relative to `log_root` and text
    /// quoted by `quoter`.
    pub fn matrix_options(
        &self,
        flags: &MatrixFlags,
        report: &Report,
        log_root: PathBuf,
        quoter: Quoter,
    ) -> RenderOptions {
        let defaults = RenderOptions::for_report(report);
        RenderOptions {
            key: flags.key.clone().unwrap_or(defaults.key),
            log_root: Some(log_root),
            tail_lines: flags.tail_lines,
            strict_open: flags.strict_table == super::flags::StrictTable::Open,
            link: flags.link.clone().or_else(|| self.actions.run_url()),
            web: self.actions.server_url.clone(),
            quoter,
            ..defaults
        }
    }

    /// The render options of `merge` and `render`.
    pub fn render_options(
        &self,
        flags: &RenderFlags,
        report: &Report,
        log_root: PathBuf,
    ) -> RenderOptions {
        RenderOptions {
            color: self.color,
            budget: Budget {
                max_bytes: flags.max_bytes,
                max_chars: flags.max_chars,
            },
            signal: SignalInfo {
                task_id: flags.task_id.clone(),
                files: flags.modified_files.clone(),
                tests: flags.tests_written.clone(),
                summary: flags.summary.clone(),
            },
            ..self.matrix_options(&flags.matrix, report, log_root, quoter(None))
        }
    }
}

/// Whether to colour stdout: `--color`, then CARGO_TERM_COLOR, then NO_COLOR, then
/// whether stdout is a terminal.
fn use_color(flag: Option<ColorChoice>) -> bool {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let choice = flag.or_else(|| match var("CARGO_TERM_COLOR").as_deref() {
        Some("always") => Some(ColorChoice::Always),
        Some("never") => Some(ColorChoice::Never),
        _ => None,
    });
    match choice {
        Some(ColorChoice::Always) => true,
        Some(ColorChoice::Never) => false,
        _ => var("NO_COLOR").is_none() && std::io::stdout().is_terminal(),
    }
}

/// Quotes untrusted text, masking the values of this process's secret-looking
/// variables, `token` (the tool's own, when given) and token shapes.
pub(crate) fn quoter(token: Option<&str>) -> Quoter {
    let vars: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let mut redactor = Redactor::from_vars(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    // The variables the Action's `mask-env` names, whatever their names say.
    let named = std::env::var(crate::run::secrets::MASK_ENV_VAR).unwrap_or_default();
    let named: Vec<&str> = named.split([' ', ',', '\n']).map(str::trim).collect();
    for (name, value) in &vars {
        if named.contains(&name.as_str()) {
            redactor.add(value);
        }
    }
    if let Some(token) = token {
        redactor.add(token);
    }
    Quoter::new(redactor)
}

/// The current folder.
pub(crate) fn current_dir() -> Result<PathBuf, Error> {
    std::env::current_dir().map_err(|source| Error::Io {
        context: "cannot read the current directory".to_owned(),
        source,
    })
}

/// The folder `path` is in (`.` for a bare file name).
pub(crate) fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}
