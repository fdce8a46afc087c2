//! What a render shows beyond the report: the tail of each failed pair's log, read from
//! the log folder (bounded, confined to it, quoted) once, before any format is rendered.
//! With the tails loaded, every format is a pure function of the report, the tails and
//! the options; the state of each grid cell is decided once too ([`super::cell`]).

use super::{Quoted, RenderOptions};
use crate::results::RowResult;

/// The log tail of each failed row, by its index in the report's rows.
#[derive(Debug, Clone, Default)]
pub struct Tails(Vec<Option<String>>);

impl Tails {
    /// At most this much of each log is read for the markdown matrix, a check run's text
    /// and JUnit.
    pub const SHORT: u64 = 16 * 1024;
    /// ... and for the HTML page.
    pub const LONG: u64 = 64 * 1024;

    /// The last `options.tail_lines` lines of each failed row's log, at most `max_bytes`
    /// read, quoted; none without a log folder in `options`.
    pub fn load(report: &Quoted, options: &RenderOptions, max_bytes: u64) -> Tails {
        Tails(
            report
                .rows
                .iter()
                .map(|row| {
                    (row.result == RowResult::Fail)
                        .then(|| report.log_tail(options, &row.detail, max_bytes))
                        .flatten()
                })
                .collect(),
        )
    }

    /// The tail of row `index`, when it failed and its log had something to show.
    pub fn of(&self, index: usize) -> Option<&str> {
        self.0.get(index)?.as_deref()
    }
}
