//! The manifest (`verify-matrix.yml`): raw serde model, validation into the typed model,
//! positioned diagnostics, the digest, and loading from YAML or Cargo.toml metadata.

pub mod aot;
pub mod compare;
pub mod diagnostic;
pub mod digest;
mod error;
pub mod files;
pub mod guard;
pub mod init;
mod load;
pub mod model;
mod parse;
pub mod raw;
mod report_format;
pub mod runs_on;
pub mod schema;
pub mod spans;
pub mod steps;
pub mod validate;

pub use error::ManifestError;
pub use load::{
    Dialect, FILE_NAMES, Found, discover, from_cargo_toml_text, from_cargo_toml_text_in,
    from_embedded, from_text_as, from_text_in, from_yaml_text, load, load_as, load_yaml_file,
};
pub use model::*;
pub use report_format::ReportFormat;
