//! The process exit codes, stable across releases and documented in the book
//! (docs/configuration.md).
//!
//! Workflows and coordinators branch on these, so a value never changes meaning.

/// Verified, or the command succeeded.
pub const OK: i32 = 0;
/// Not verified: a required check failed (or a signal was rejected).
pub const FAILED: i32 = 1;
/// Usage error: bad flags or arguments.
pub const USAGE: i32 = 2;
/// Not verified: coverage incomplete (missing pairs, unavailable environment) and nothing failed.
pub const INCOMPLETE: i32 = 3;
/// Invalid input: a manifest, result file, report or signal is unreadable or invalid.
pub const INVALID_INPUT: i32 = 4;
/// Publishing to GitHub failed (after retries).
pub const PUBLISH_FAILED: i32 = 5;
/// Internal error: a bug or an I/O failure of the tool itself.
pub const INTERNAL: i32 = 70;
/// Interrupted by SIGINT/SIGTERM/SIGHUP; partial results are still written.
pub const INTERRUPTED: i32 = 130;
