//! `init`: a starter manifest and workflow for the project found.

use std::path::PathBuf;

use crate::cli::Error;
use crate::cli::args::InitArgs;
use crate::cli::flags::Ci;
use crate::cli::settings::Settings;
use crate::exit_code;
use crate::manifest::init::{self, MANIFEST_PATH, WORKFLOW_PATH};

/// Writes the starter manifest (and workflow); refuses to overwrite either without
/// `--force`, before writing anything.
pub(super) fn run(settings: &Settings, args: &InitArgs) -> Result<i32, Error> {
    if !args.dir.is_dir() {
        return Err(Error::Usage(format!(
            "`{}` is not a folder",
            args.dir.display()
        )));
    }
    let project = init::detect(&args.dir);
    if args.ci == Ci::Gitlab {
        return gitlab(settings, args, &project);
    }
    let mut files: Vec<(PathBuf, String)> =
        vec![(args.dir.join(MANIFEST_PATH), init::manifest_text(&project))];
    if !args.no_workflow {
        files.push((args.dir.join(WORKFLOW_PATH), init::workflow_text(&project)));
    }
    if !args.force {
        let existing: Vec<String> = files
            .iter()
            .filter(|(path, _)| path.exists())
            .map(|(path, _)| format!("`{}`", path.display()))
            .collect();
        if !existing.is_empty() {
            return Err(Error::Usage(format!(
                "{} already exist{}; nothing was written (--force overwrites)",
                existing.join(" and "),
                if existing.len() == 1 { "s" } else { "" }
            )));
        }
    }
    for (path, text) in &files {
        write(path, text)?;
    }
    let ignored = ignore_results(&args.dir)?;
    let reports = init::report_files(&project);
    let reports_ignored = ignore_reports(&args.dir, &reports)?;
    if !settings.quiet {
        let found = project.describe();
        if found.is_empty() {
            eprintln!(
                "found no Cargo.toml, package.json, pyproject.toml or go.mod: add your checks"
            );
        } else {
            eprintln!("found {}", found.join(", "));
        }
        for (path, _) in &files {
            eprintln!("wrote {}", path.display());
        }
        if let Some(gitignore) = ignored {
            eprintln!(
                "added {RESULTS_IGNORED} to {} (where `run` writes its results)",
                gitignore.display()
            );
        }
        if let Some((gitignore, added)) = reports_ignored {
            eprintln!(
                "added {} to {} (the test runners' reports the checks read)",
                added.join(", "),
                gitignore.display()
            );
        }
        eprintln!(
            "next: `cargo verify-matrix plan` shows the matrix, `cargo verify-matrix` runs it here"
        );
    }
    Ok(exit_code::OK)
}

/// `init --ci gitlab`: the starter manifest where there is none, then `.gitlab-ci.yml`
/// from the manifest's environments (an existing manifest is kept and used: GitLab's
/// matrix is written out, so the pipeline follows the manifest).
fn gitlab(settings: &Settings, args: &InitArgs, project: &init::Project) -> Result<i32, Error> {
    use crate::plan::gitlab::{PIPELINE_PATH, pipeline};
    let pipeline_path = args.dir.join(PIPELINE_PATH);
    if pipeline_path.exists() && !args.force {
        return Err(Error::Usage(format!(
            "`{}` already exists; nothing was written (--force overwrites)",
            pipeline_path.display()
        )));
    }
    // `discover` names what it finds relative to `--dir`: the manifest's path in the
    // repository (whose top is `--dir`, where GitLab reads `.gitlab-ci.yml`), which the
    // pipeline names, never a path of this machine.
    let found = crate::manifest::discover(&args.dir).ok();
    let mut wrote = Vec::new();
    let relative = match found {
        Some(crate::manifest::Found::Yaml(path) | crate::manifest::Found::Cargo(path)) => path,
        None => {
            let path = args.dir.join(MANIFEST_PATH);
            write(&path, &init::manifest_text(project))?;
            wrote.push(path);
            PathBuf::from(MANIFEST_PATH)
        }
    };
    let manifest_path = args.dir.join(&relative);
    let manifest = settings.load_manifest_from(Some(&manifest_path), &args.dir)?;
    let plan = crate::plan::plan(&manifest, None);
    let relative = relative
        .to_str()
        .map(|p| p.replace('\\', "/"))
        .filter(|p| !p.split('/').any(|part| part == ".."))
        .ok_or_else(|| {
            Error::Usage(format!(
                "the manifest `{}` is not inside `{}`: run `init --ci gitlab` at the top of the repository that holds it",
                manifest_path.display(),
                args.dir.display()
            ))
        })?;
    if !args.no_workflow {
        let text = pipeline(&plan, init::linux_image(project), &relative)
            .map_err(|why| Error::Usage(format!("{why}; nothing was written")))?;
        write(&pipeline_path, &text)?;
        wrote.push(pipeline_path);
    }
    let ignored = ignore_results(&args.dir)?;
    if !settings.quiet {
        let found = project.describe();
        if !found.is_empty() {
            eprintln!("found {}", found.join(", "));
        }
        if !wrote.contains(&manifest_path) {
            eprintln!("kept {} (the pipeline follows it)", manifest_path.display());
        }
        for path in &wrote {
            eprintln!("wrote {}", path.display());
        }
        if let Some(gitignore) = ignored {
            eprintln!(
                "added {RESULTS_IGNORED} to {} (where `run` writes its results)",
                gitignore.display()
            );
        }
        eprintln!(
            "next: add a project access token (role Developer, scope `api`) as the masked CI/CD \
             variable GITLAB_TOKEN, so that the report job can write its note and status"
        );
    }
    Ok(exit_code::OK)
}

fn write(path: &std::path::Path, text: &str) -> Result<(), Error> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| Error::Io {
            context: format!("cannot create `{}`", parent.display()),
            source,
        })?;
    }
    std::fs::write(path, text).map_err(|source| Error::Io {
        context: format!("cannot write `{}`", path.display()),
        source,
    })
}

/// Adds each of `files` (the runners' report files the checks write, at the top) to
/// `dir`'s `.gitignore` unless a line there already names it; the file it changed and
/// what it added, if it added anything.
fn ignore_reports(
    dir: &std::path::Path,
    files: &[&str],
) -> Result<Option<(PathBuf, Vec<String>)>, Error> {
    if files.is_empty() {
        return Ok(None);
    }
    let path = dir.join(".gitignore");
    let mut text = std::fs::read_to_string(&path).unwrap_or_default();
    let added: Vec<String> = files
        .iter()
        .filter(|file| {
            !text
                .lines()
                .any(|line| line.trim().trim_start_matches('/') == **file)
        })
        .map(|file| (*file).to_owned())
        .collect();
    if added.is_empty() {
        return Ok(None);
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# cargo verify-matrix: the test runners' reports the checks read\n");
    for file in &added {
        text.push_str(&format!("/{file}\n"));
    }
    std::fs::write(&path, text).map_err(|source| Error::Io {
        context: format!("cannot write `{}`", path.display()),
        source,
    })?;
    Ok(Some((path, added)))
}

/// The line that keeps `run`'s default results folder out of git.
const RESULTS_IGNORED: &str = "verify-matrix-results/";

/// Adds [`RESULTS_IGNORED`] to `dir`'s `.gitignore` (created if need be) unless a line
/// there already ignores the folder; the file it changed, if it changed one.
fn ignore_results(dir: &std::path::Path) -> Result<Option<PathBuf>, Error> {
    let path = dir.join(".gitignore");
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(Error::Io {
                context: format!("cannot read `{}`", path.display()),
                source,
            });
        }
    };
    let name = RESULTS_IGNORED.trim_end_matches('/');
    let already = existing.lines().map(str::trim).any(|line| {
        let line = line.trim_start_matches('/').trim_end_matches('/');
        line == name || line == format!("{name}*") || line == format!("**/{name}")
    });
    if already {
        return Ok(None);
    }
    let mut text = existing;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!(
        "# cargo verify-matrix: where `run` writes its results\n{RESULTS_IGNORED}\n"
    ));
    std::fs::write(&path, text).map_err(|source| Error::Io {
        context: format!("cannot write `{}`", path.display()),
        source,
    })?;
    Ok(Some(path))
}
