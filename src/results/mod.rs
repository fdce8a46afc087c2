//! Result files (versioned, atomically written), and the report built from them.

pub mod baseline;
pub mod cause;
mod confine;
pub mod duration;
pub mod identity;
pub mod intake;
pub mod io;
pub mod jobs;
pub mod journal;
pub mod logs;
pub mod merge;
pub(crate) mod objects;
pub mod parts;
pub mod quarantine;
pub mod report;
pub mod schema;
mod shards;
pub mod source;
mod stream;
pub mod table;
mod verdict;

pub use duration::format_duration;
pub use io::{ResultFileError, write_json_atomic, write_json_replacing, write_report_replacing};
pub use report::{
    Contradiction, Disagreement, InfraBlocked, ManifestOrigin, ManifestTrust, Manual, Missing,
    MissingKind, PartialRun, Place, Report, ReportManifest, Row, RowResult, Verdict,
};
pub use schema::*;
