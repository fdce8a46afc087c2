//! The coding-agent gate: what it trusts, where it reads it from, and one judgement that
//! the four agents' Stop hooks (`hook claude-code|codex|gemini|cursor`) and the MCP
//! server (`mcp`) share.
//!
//! - [`trust`]: the repository, the commit the session started at, the manifest as
//!   committed there (read from git's objects by [`git`], with every file it names), and
//!   the judgement: the manifest that runs, or why nothing may;
//! - [`strengthen`]: which changes of the working copy's manifest are proven
//!   strengthenings (an allowlist: everything else blocks);
//! - [`state`]: the user's state folder outside the repository (allowances), and
//!   [`session`]: each agent session's commit and blocks in a row, kept there;
//! - [`protocol`]: the four agents' hook protocols, what each client sends and how each
//!   is answered;
//! - `mcp` (with the `mcp` feature): the Model Context Protocol server and its tools (`plan`, `run`, `verdict`,
//!   `failures`), judging by the same trusted manifest as the hooks.
//!
//! The protocols themselves are thin: each reads its client's input, asks
//! [`trust::judge`], runs what it says, and answers in its client's words
//! (`cli/commands/hook.rs`); `cli/commands/mcp.rs` only finds the repository and
//! manifest from the command line and starts `mcp::serve`.

pub mod git;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod protocol;
pub mod session;
pub mod state;
pub mod strengthen;
pub mod trust;
