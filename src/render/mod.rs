//! Rendering a report: one function per format, all over the same [`Report`].

mod answer;
pub mod aot;
pub mod baseline_view;
pub mod budget;
pub mod cell;
pub mod details;
pub mod hook;
pub mod html;
pub mod junit;
pub mod markdown;
mod own;
pub mod places;
pub mod provenance;
pub mod quoted;
pub mod signal;
pub mod steps;
pub mod table;
pub mod tests_view;
pub mod text;
pub mod validate_signal;
pub mod view;

pub use view::Tails;

use std::path::PathBuf;

pub use budget::Budget;
pub use quoted::Quoted;
pub use signal::SignalInfo;

use crate::exit_code;
use crate::manifest::aot::BaseCase;
use crate::results::Report;
use crate::untrusted::Quoter;

/// The formats `render` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The Environment Verification Matrix (docs/formats.md §5).
    Markdown,
    /// A terminal table.
    Table,
    /// The report as JSON (docs/formats.md §3).
    Json,
    /// READY_FOR_REVIEW, an agent's signal (docs/formats.md §6); needs --task-id.
    Signal,
    /// AUDIT_PASSED (docs/formats.md §6), refused unless the report is VERIFIED; needs --task-id.
    Audit,
    /// One INFRA_BLOCKED block per environment with no results (docs/formats.md §5).
    InfraBlocked,
    /// JUnit XML (docs/formats.md §7).
    Junit,
    /// One self-contained HTML page.
    Html,
    /// A verification report, one entry per step of a task's `verification_steps`
    /// (docs/formats.md §8); reads result files (a run's folder), not a merged report.
    Steps,
    /// The checklist answer for the manifest's `base_case` (docs/formats.md §9); reads
    /// result files (a run's folder), not a merged report.
    Aot,
}

/// Settings shared by the formats.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    /// The key in the hidden marker line (one sticky comment per manifest).
    pub key: String,
    /// The folder log paths are relative to; no log tails without one.
    pub log_root: Option<PathBuf>,
    /// Lines of log shown per failure.
    pub tail_lines: usize,
    /// The strict table shown open instead of folded.
    pub strict_open: bool,
    /// Failure details in the markdown (a check run shows them in its text instead).
    pub details: bool,
    /// ANSI colours in the terminal table.
    pub color: bool,
    /// The size limit of the markdown matrix.
    pub budget: Budget,
    /// Where the full report can be read, for a matrix cut down to its budget.
    pub link: Option<String>,
    /// The web root (`GITHUB_SERVER_URL`, GitLab's `CI_SERVER_URL`) the verified commit
    /// and the run are linked under; `https://github.com` (`https://gitlab.com`) when
    /// not given.
    pub web: Option<String>,
    /// Whose pages those links are: GitHub's or GitLab's.
    pub forge: provenance::Forge,
    /// What the agent signals say beyond the matrix.
    pub signal: SignalInfo,
    /// How text from checks, artifacts and agents is quoted (secrets to mask).
    pub quoter: Quoter,
    /// What `--format steps` needs beyond the report (none for a report read alone).
    pub steps: Option<steps::StepsInfo>,
    /// The base case `--format aot` answers (none for a report read alone).
    pub aot: Option<BaseCase>,
}

impl RenderOptions {
    /// Options for `report`'s manifest, without logs, colour or a size limit.
    pub fn for_report(report: &Report) -> RenderOptions {
        RenderOptions {
            key: sticky_key(&report.manifest.path),
            log_root: None,
            tail_lines: 40,
            strict_open: false,
            details: true,
            color: false,
            budget: Budget::UNLIMITED,
            link: None,
            web: None,
            forge: provenance::Forge::GitHub,
            signal: SignalInfo::default(),
            quoter: Quoter::default(),
            steps: None,
            aot: None,
        }
    }
}

impl RenderOptions {
    /// These options with what `--format steps` and `--format aot` need; `--task-id`
    /// names the task if given.
    pub fn with_contracts(
        mut self,
        steps: Option<steps::StepsInfo>,
        aot: Option<BaseCase>,
    ) -> RenderOptions {
        self.steps = steps.map(|info| steps::StepsInfo {
            task_id: self.signal.task_id.clone().or(info.task_id),
            ..info
        });
        self.aot = aot;
        self
    }
}

/// Why a format cannot be produced for a report.
/// The sticky comment's key for a manifest at `path`: the path as the repository names
/// it. A path given absolute (`--manifest /home/me/repo/verify-matrix.yml`) would put
/// the machine's folders in the comment and make another comment for each checkout: its
/// file name is the key (with `.github/` when it lives there).
pub fn sticky_key(path: &str) -> String {
    let normal = path.replace('\\', "/");
    if !(normal.starts_with('/') || normal.get(1..3) == Some(":/")) {
        return path.to_owned();
    }
    let mut parts = normal.rsplit('/');
    let name = parts.next().unwrap_or_default();
    match parts.next() {
        Some(".github") => format!(".github/{name}"),
        _ => name.to_owned(),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// AUDIT_PASSED for a report that is not VERIFIED.
    #[error("AUDIT_PASSED refused: the report is {verdict}, not VERIFIED{reasons}")]
    AuditRefused { verdict: String, reasons: String },
    /// INFRA_BLOCKED for a report where every environment has results.
    #[error("no INFRA_BLOCKED signal: every environment has results")]
    NothingBlocked,
    /// A signal without the task it is about.
    #[error("--format {0} needs --task-id")]
    NoTaskId(&'static str),
    /// Not even the verdict lines fit the size budget.
    #[error("{0}")]
    OverBudget(String),
    /// `--format steps` or `--format aot` of a report read alone.
    #[error(
        "--format {0} reads a run's result files (the manifest and the run's facts are in them), not a merged report; give the run's folder"
    )]
    NeedsResults(&'static str),
}

impl RenderError {
    /// The documented exit code: a refused signal is 1, a bad option is 2.
    pub fn exit_code(&self) -> i32 {
        match self {
            RenderError::AuditRefused { .. } | RenderError::NothingBlocked => exit_code::FAILED,
            RenderError::NoTaskId(_)
            | RenderError::OverBudget(_)
            | RenderError::NeedsResults(_) => exit_code::USAGE,
        }
    }
}

/// Renders `report` in `format`, every quoted string through `options.quoter`.
pub fn render(
    report: &Report,
    format: Format,
    options: &RenderOptions,
) -> Result<String, RenderError> {
    render_quoted(&Quoted::new(report, &options.quoter), format, options)
}

/// Renders a report already quoted.
pub fn render_quoted(
    report: &Quoted,
    format: Format,
    options: &RenderOptions,
) -> Result<String, RenderError> {
    let text = match format {
        Format::Markdown => {
            markdown::render(report, &Tails::load(report, options, Tails::SHORT), options)?
        }
        Format::Table => table::render(report, options.color),
        Format::Json => {
            let mut text = serde_json::to_string_pretty(report.report()).unwrap_or_default();
            text.push('\n');
            text
        }
        Format::Signal => signal::ready_for_review(report, &options.signal)?,
        Format::Audit => signal::audit_passed(report, &options.signal)?,
        Format::InfraBlocked => signal::infra_blocked(report, &options.signal)?,
        Format::Junit => junit::render(report, &Tails::load(report, options, Tails::SHORT)),
        Format::Html => html::render(report, options),
        Format::Steps => {
            let info = options
                .steps
                .as_ref()
                .ok_or(RenderError::NeedsResults("steps"))?;
            steps::render(report, options, info)
        }
        Format::Aot => {
            let case = options
                .aot
                .as_ref()
                .ok_or(RenderError::NeedsResults("aot"))?;
            aot::render(report, options, case)
        }
    };
    // What people and coordinators read as text is sealed (the markdown per shape,
    // inside its budget); the JSON answers are data, each string quoted on its own.
    Ok(match format {
        Format::Table
        | Format::Signal
        | Format::Audit
        | Format::InfraBlocked
        | Format::Junit
        | Format::Html => own::sealed(report, text),
        Format::Markdown | Format::Json | Format::Steps | Format::Aot => text,
    })
}

#[cfg(test)]
mod tests {
    use super::sticky_key;

    #[test]
    fn an_absolute_manifest_path_is_keyed_by_its_name_in_the_repository() {
        assert_eq!(sticky_key("verify-matrix.yml"), "verify-matrix.yml");
        assert_eq!(sticky_key("ci/verify-matrix.yml"), "ci/verify-matrix.yml");
        assert_eq!(
            sticky_key("/home/me/repo/verify-matrix.yml"),
            "verify-matrix.yml"
        );
        assert_eq!(
            sticky_key("/home/me/repo/.github/verify-matrix.yml"),
            ".github/verify-matrix.yml"
        );
        assert_eq!(
            sticky_key("C:\\work\\repo\\verify-matrix.yml"),
            "verify-matrix.yml"
        );
    }
}
