//! Errors from finding, reading and validating a manifest; all are exit code 4.

use std::path::PathBuf;

use super::diagnostic::Diagnostic;

/// Why a manifest could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// Nothing found by the search.
    #[error(
        "no manifest found: looked for verify-matrix.yml, verify-matrix.yaml and .github/verify-matrix.yml from `{}` up to `{}`, and for [workspace.metadata.verify-matrix] in Cargo.toml; pass --manifest PATH, or write a starter one for this project with `cargo verify-matrix init`",
        start.display(), top.display()
    )]
    NotFound { start: PathBuf, top: PathBuf },
    /// The file could not be read.
    #[error("failed to read manifest `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is larger than any manifest can be.
    #[error("manifest `{}` is larger than {limit} bytes; it was not read", path.display())]
    TooLarge { path: PathBuf, limit: u64 },
    /// The file is not UTF-8 text.
    #[error(
        "manifest `{}` is not UTF-8: invalid byte at offset {offset} (line {line}, column {col})",
        path.display()
    )]
    NotUtf8 {
        path: PathBuf,
        offset: usize,
        line: usize,
        col: usize,
    },
    /// `cargo metadata` failed.
    #[error("failed to read Cargo metadata from `{}`: {message}", path.display())]
    CargoMetadata { path: PathBuf, message: String },
    /// The Cargo.toml has no verify-matrix table.
    #[error("`{}` has no [workspace.metadata.verify-matrix] or [package.metadata.verify-matrix] table", path.display())]
    NoCargoTable { path: PathBuf },
    /// The copy of the manifest a result file carries is not readable JSON.
    #[error("the manifest embedded in `{}` is not readable: {message}", path.display())]
    Embedded { path: PathBuf, message: String },
    /// Problems in the content: `rendered` holds every one with its position.
    #[error("{}", rendered.trim_end())]
    Invalid {
        count: usize,
        rendered: String,
        diagnostics: Vec<Diagnostic>,
    },
}

impl ManifestError {
    /// The error on one line (each problem with its line and column, without snippets),
    /// for where a report quotes it.
    pub fn one_line(&self) -> String {
        match self {
            ManifestError::Invalid { diagnostics, .. } => diagnostics
                .iter()
                .map(|d| {
                    let at = d
                        .pos
                        .map(|p| format!(" at line {}, column {}", p.line, p.col))
                        .unwrap_or_default();
                    let path = if d.path.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", d.path)
                    };
                    format!("{}{at}{path}", d.message)
                })
                .collect::<Vec<_>>()
                .join("; "),
            other => other.to_string(),
        }
    }
}
