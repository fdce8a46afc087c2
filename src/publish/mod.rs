//! Publishing a report where reviewers look (DESIGN.md §6). This build publishes to the
//! job summary (`$GITHUB_STEP_SUMMARY`) and the step outputs (`verdict`, `report`).
//!
//! Publishing is planned first, as data, then applied: `--dry-run` prints the plan, so
//! what it shows is exactly what would be written.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::render::{self, Budget, Format, RenderError, RenderOptions};
use crate::results::Report;

/// GitHub shows at most 1 MiB of a step's summary.
pub const STEP_SUMMARY_LIMIT: usize = 1024 * 1024;

/// Where a report is published.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// Append the matrix to the job summary ($GITHUB_STEP_SUMMARY) and set the step
    /// outputs `verdict` and `report`.
    Summary,
}

/// Everything one publication writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publication {
    /// The markdown appended to the job summary, and the file it goes to.
    pub summary: Option<(PathBuf, String)>,
    /// Step outputs, `name=value` lines for `$GITHUB_OUTPUT`.
    pub outputs: Vec<(String, String)>,
    /// The `$GITHUB_OUTPUT` file, when there is one.
    pub output_file: Option<PathBuf>,
}

/// Why a publication cannot be made or written.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error(transparent)]
    Render(#[from] RenderError),
    /// Not under GitHub Actions (and not a dry run).
    #[error(
        "$GITHUB_STEP_SUMMARY is not set, so there is no job summary to write to (outside GitHub Actions, use --dry-run to see what would be written)"
    )]
    NoSummaryFile,
    #[error("failed to write {what} `{}`: {source}", path.display())]
    Write {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The Actions variables a publication reads.
#[derive(Debug, Clone, Default)]
pub struct ActionsFiles {
    pub step_summary: Option<PathBuf>,
    pub output: Option<PathBuf>,
}

impl ActionsFiles {
    /// `$GITHUB_STEP_SUMMARY` and `$GITHUB_OUTPUT`, when set and not empty.
    pub fn from_env() -> ActionsFiles {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        ActionsFiles {
            step_summary: var("GITHUB_STEP_SUMMARY"),
            output: var("GITHUB_OUTPUT"),
        }
    }
}

/// Plans what publishing `report` (read from `report_path`) to `targets` writes.
pub fn plan(
    report: &Report,
    report_path: &Path,
    targets: &[Target],
    options: &RenderOptions,
    files: &ActionsFiles,
    dry_run: bool,
) -> Result<Publication, PublishError> {
    let mut publication = Publication {
        summary: None,
        outputs: Vec::new(),
        output_file: files.output.clone(),
    };
    if targets.contains(&Target::Summary) {
        let path = match (&files.step_summary, dry_run) {
            (Some(path), _) => path.clone(),
            (None, true) => PathBuf::from("$GITHUB_STEP_SUMMARY"),
            (None, false) => return Err(PublishError::NoSummaryFile),
        };
        // Earlier steps' summaries share the limit.
        let used = std::fs::metadata(&path).map_or(0, |m| m.len() as usize);
        let options = RenderOptions {
            budget: Budget {
                max_bytes: Some(STEP_SUMMARY_LIMIT.saturating_sub(used)),
                max_chars: None,
            },
            ..options.clone()
        };
        let markdown = render::render(report, Format::Markdown, &options)?;
        publication.summary = Some((path, markdown));
        publication.outputs = vec![
            ("verdict".to_owned(), report.verdict.as_str().to_owned()),
            ("report".to_owned(), report_path.display().to_string()),
        ];
    }
    Ok(publication)
}

impl Publication {
    /// What `--dry-run` prints: each write, then what it writes.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        if let Some((path, markdown)) = &self.summary {
            let _ = writeln!(
                out,
                "=== job summary: append {} bytes to {}",
                markdown.len(),
                path.display()
            );
            out.push_str(markdown);
        }
        for (name, value) in &self.outputs {
            let _ = writeln!(out, "=== step output: {name}={value}");
        }
        out
    }

    /// Writes the publication.
    pub fn apply(&self) -> Result<(), PublishError> {
        if let Some((path, markdown)) = &self.summary {
            append(path, markdown.as_bytes(), "the job summary")?;
        }
        if let Some(path) = &self.output_file {
            let mut lines = String::new();
            for (name, value) in &self.outputs {
                output_line(&mut lines, name, value);
            }
            append(path, lines.as_bytes(), "$GITHUB_OUTPUT")?;
        }
        Ok(())
    }
}

fn append(path: &Path, bytes: &[u8], what: &'static str) -> Result<(), PublishError> {
    let write_err = |source| PublishError::Write {
        what,
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(write_err)?;
    file.write_all(bytes).map_err(write_err)
}

/// One `$GITHUB_OUTPUT` entry; a value with a line break takes the delimited form.
fn output_line(out: &mut String, name: &str, value: &str) {
    if value.contains(['\n', '\r']) {
        let mut delimiter = "VERIFY_MATRIX_EOF".to_owned();
        while value.contains(&delimiter) {
            delimiter.push('_');
        }
        let _ = writeln!(out, "{name}<<{delimiter}\n{value}\n{delimiter}");
    } else {
        let _ = writeln!(out, "{name}={value}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_values_with_line_breaks_are_delimited() {
        let mut out = String::new();
        output_line(&mut out, "verdict", "VERIFIED");
        output_line(&mut out, "report", "a\nVERIFY_MATRIX_EOF");
        assert_eq!(
            out,
            "verdict=VERIFIED\nreport<<VERIFY_MATRIX_EOF_\na\nVERIFY_MATRIX_EOF\nVERIFY_MATRIX_EOF_\n"
        );
    }
}
