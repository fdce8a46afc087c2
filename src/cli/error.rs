//! The top-level error: every failure of a command, each with its exit code.

use crate::exit_code;
use crate::manifest::ManifestError;
use crate::plan::select::SelectError;
use crate::results::ResultFileError;
use crate::run::RunError;

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    Select(#[from] SelectError),
    #[error(transparent)]
    ResultFile(#[from] ResultFileError),
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(transparent)]
    Merge(#[from] crate::results::merge::MergeError),
    #[error(transparent)]
    Render(#[from] crate::render::RenderError),
    #[error(transparent)]
    Publish(#[from] crate::publish::PublishError),
    #[error(transparent)]
    History(#[from] crate::history::HistoryError),
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    InvalidInput(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
}

impl Error {
    /// The documented exit code for this failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Manifest(_)
            | Error::ResultFile(_)
            | Error::InvalidInput(_)
            | Error::History(_)
            | Error::Merge(_) => exit_code::INVALID_INPUT,
            Error::Select(_) | Error::Usage(_) => exit_code::USAGE,
            Error::Render(e) => e.exit_code(),
            Error::Publish(crate::publish::PublishError::Render(e)) => e.exit_code(),
            Error::Publish(crate::publish::PublishError::NoSummaryFile) => exit_code::USAGE,
            Error::Publish(crate::publish::PublishError::Write { .. }) => exit_code::PUBLISH_FAILED,
            Error::Publish(
                crate::publish::PublishError::Unplaceable(_)
                | crate::publish::PublishError::Context(crate::publish::ContextError::Missing(_)),
            ) => exit_code::USAGE,
            Error::Publish(crate::publish::PublishError::Context(_)) => exit_code::INVALID_INPUT,
            // Another run owns the folder: the input (the output folder) is unusable.
            Error::Run(RunError::Locked { .. }) => exit_code::INVALID_INPUT,
            Error::Run(_) | Error::Io { .. } => exit_code::INTERNAL,
        }
    }
}
