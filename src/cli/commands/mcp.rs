//! `mcp`: the gate as a Model Context Protocol server over stdio ([`crate::gate::mcp`]):
//! the repository and manifest found from the command line, then served.

use std::path::Path;

use super::super::Error;
use super::super::args::McpArgs;
use super::super::settings::{Settings, quoter};
use crate::gate::mcp::{Config, serve};
use crate::gate::trust::Repository;

pub(super) fn run(settings: &Settings, args: &McpArgs) -> Result<i32, Error> {
    let here = std::env::current_dir().map_err(|source| Error::Io {
        context: "cannot read the current folder".to_owned(),
        source,
    })?;
    let repo = Repository::around(&here).map_err(Error::Usage)?;
    let manifest = match &settings.manifest {
        Some(path) => here.join(path),
        None => match crate::manifest::discover(&here) {
            Ok(crate::manifest::Found::Yaml(path) | crate::manifest::Found::Cargo(path)) => path,
            Err(e) => return Err(e.into()),
        },
    };
    let relative = manifest
        .canonicalize()
        .ok()
        .and_then(|m| m.strip_prefix(&repo.root).ok().map(Path::to_path_buf));
    let Some(relative) = relative else {
        return Err(Error::Usage(format!(
            "the manifest `{}` is outside the repository `{}`: the server verifies this repository with its own manifest",
            manifest.display(),
            repo.root.display()
        )));
    };
    serve(Config {
        repo,
        manifest: relative,
        dialect: settings.dialect,
        out: args.out.clone(),
        actions: settings.actions.clone(),
        quoter: quoter(None),
    })
    .map_err(Error::Usage)?;
    Ok(crate::exit_code::OK)
}
