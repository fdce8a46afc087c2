//! `plan`: the (check × environment) matrix, for people or for `strategy.matrix`.

use crate::cli::args::{PlanArgs, PlanFormat};
use crate::cli::settings::Settings;
use crate::cli::{Error, print_stdout};
use crate::exit_code;
use crate::plan;

pub(super) fn run(settings: &Settings, args: &PlanArgs) -> Result<i32, Error> {
    let manifest = settings.load_manifest()?;
    let only = match &args.env {
        Some(name) => Some(
            manifest
                .environment(name)
                .map(|e| e.name.clone())
                .ok_or_else(|| {
                    Error::Usage(format!(
                        "unknown environment `{name}`{}; the manifest declares: {}",
                        crate::manifest::diagnostic::suggestion(
                            name,
                            manifest.environments.iter().map(|e| e.name.as_str())
                        ),
                        manifest.environment_list()
                    ))
                })?,
        ),
        None => None,
    };
    let plan = plan::plan(&manifest, only.as_ref());
    match args.format {
        PlanFormat::Table => print_stdout(&plan::table::render(&plan))?,
        PlanFormat::Json => {
            print_stdout(&(serde_json::to_string_pretty(&plan).unwrap_or_default() + "\n"))?
        }
        PlanFormat::Github => {
            let matrix = serde_json::to_string(&plan.github_matrix()).unwrap_or_default();
            print_stdout(&format!("{matrix}\n"))?;
            settings.write_github_output("matrix", &matrix)?;
        }
    }
    Ok(exit_code::OK)
}
