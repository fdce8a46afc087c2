//! `schema`: the manifest's JSON Schema.

use crate::cli::{Error, print_stdout};
use crate::exit_code;

/// Prints the manifest's JSON Schema.
pub(super) fn run() -> Result<i32, Error> {
    let schema = crate::manifest::schema::json_schema();
    let text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    print_stdout(&(text + "\n"))?;
    Ok(exit_code::OK)
}
