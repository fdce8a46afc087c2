//! Rendering a report: one function per format, all over the same [`Report`].

pub mod markdown;
pub mod table;
pub mod text;

use std::path::PathBuf;

use crate::results::Report;

/// The formats `render` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The Environment Verification Matrix (FORMATS.md §5).
    Markdown,
    /// A terminal table.
    Table,
    /// The report as JSON (FORMATS.md §3).
    Json,
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
    /// ANSI colours in the terminal table.
    pub color: bool,
}

impl RenderOptions {
    /// Options for `report`'s manifest, without logs or colour.
    pub fn for_report(report: &Report) -> RenderOptions {
        RenderOptions {
            key: report.manifest.path.clone(),
            log_root: None,
            tail_lines: 40,
            color: false,
        }
    }
}

/// Renders `report` in `format`.
pub fn render(report: &Report, format: Format, options: &RenderOptions) -> String {
    match format {
        Format::Markdown => markdown::render(report, options),
        Format::Table => table::render(report, options.color),
        Format::Json => {
            let mut text = serde_json::to_string_pretty(report).unwrap_or_default();
            text.push('\n');
            text
        }
    }
}
