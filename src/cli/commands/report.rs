//! `report`: merge, render and publish in one step, the final job of a workflow. Whatever
//! keeps the results from being judged, this commit gets a NOT VERIFIED with the reason.

use crate::cli::args::{FailOnStep, ReportArgs};
use crate::cli::judge::{
    Judged, apply_baseline, compare_with_baseline, merged_report, unbaselined,
};
use crate::cli::publishing::manifest_key;
use crate::cli::settings::{Settings, current_dir, parent_dir, quoter};
use crate::cli::{Error, print_stdout};
use crate::exit_code;
use crate::manifest::Manifest;
use crate::render::{self, Format, Quoted};
use crate::results::merge::MergeError;
use crate::results::{Report, write_report_replacing};
use crate::run::imported::{self, Spec};

pub(super) fn run(settings: &Settings, args: &ReportArgs) -> Result<i32, Error> {
    let code = match judge_and_publish(settings, args) {
        Ok(code) => code,
        // A trial's step stays green when publishing or reading fails too; the error
        // is still said.
        Err(error)
            if args.fail_on == FailOnStep::Never
                && matches!(
                    error.exit_code(),
                    exit_code::INVALID_INPUT | exit_code::PUBLISH_FAILED
                ) =>
        {
            eprintln!("error: {error}");
            error.exit_code()
        }
        Err(error) => return Err(error),
    };
    Ok(step_code(args.fail_on, code))
}

/// The step's exit code under `--fail-on`: the verdict's own under `not-verified`; under
/// `failures`, incomplete coverage passes (a failed check still fails); under `never`,
/// any verdict and any publishing trouble pass. Each code let through is said.
fn step_code(fail_on: FailOnStep, code: i32) -> i32 {
    let tolerated = match fail_on {
        FailOnStep::NotVerified => false,
        FailOnStep::Failures => code == exit_code::INCOMPLETE,
        FailOnStep::Never => matches!(
            code,
            exit_code::FAILED
                | exit_code::INCOMPLETE
                | exit_code::INVALID_INPUT
                | exit_code::PUBLISH_FAILED
        ),
    };
    if !tolerated {
        return code;
    }
    let what = match code {
        exit_code::FAILED => "NOT VERIFIED (a required check failed)",
        exit_code::INCOMPLETE => "NOT VERIFIED (results missing)",
        exit_code::INVALID_INPUT => "no verdict (invalid input)",
        _ => "publishing failed",
    };
    let flag = match fail_on {
        FailOnStep::Failures => "failures",
        _ => "never",
    };
    eprintln!("note: --fail-on {flag}: {what}, exit {code} taken as 0; the verdict stands");
    exit_code::OK
}

fn judge_and_publish(settings: &Settings, args: &ReportArgs) -> Result<i32, Error> {
    if !args.files.is_empty() && args.paths.is_empty() {
        return from_files(settings, args);
    }
    let report_dir = parent_dir(&args.out);
    if !args.files.is_empty() {
        return match unbaselined(
            settings,
            &args.trust,
            &args.paths,
            &report_dir,
            Format::Json,
        ) {
            Ok(judged) => with_files(settings, args, judged),
            Err(error) => unjudged_results(settings, args, error),
        };
    }
    match merged_report(settings, &args.trust, &args.paths, &report_dir) {
        Ok(report) => publish_built(settings, args, report),
        Err(error) => unjudged_results(settings, args, error),
    }
}

/// Whatever kept the results from being judged (no results after a failed plan or
/// cancelled legs, an invalid manifest, unreadable artifacts), this commit gets a NOT
/// VERIFIED with the reason: an earlier commit's VERIFIED must not stand. Any other
/// error is the command's.
fn unjudged_results(settings: &Settings, args: &ReportArgs, error: Error) -> Result<i32, Error> {
    if error.exit_code() != exit_code::INVALID_INPUT {
        return Err(error);
    }
    // An invalid manifest (a failed plan) is the reason, before missing results.
    let reason = match settings.load_manifest() {
        Err(Error::Manifest(manifest)) => {
            format!(
                "no verdict: the manifest is invalid: {}",
                manifest.one_line()
            )
        }
        Err(other) => format!("no verdict: {other}"),
        Ok(_) => unjudged_reason(&error),
    };
    eprintln!("error: {error}");
    // The commit and run this verdict is about, as the comment names them.
    let source = settings.source(&current_dir()?);
    let key = manifest_key(settings)?;
    publish_unjudged(settings, args, &key, &reason, source, error.exit_code())
}

/// `report RESULTS --files GLOB`: the runner reports added to the manifest's matrix, as
/// checks of their own over the manifest's environments (unless others are given), and
/// judged with the legs' results as one report: one comment, one check run, one
/// verdict. Files that cannot be read, or a check of theirs named as one of the
/// manifest's, are the reason of this commit's NOT VERIFIED.
fn with_files(settings: &Settings, args: &ReportArgs, judged: Judged) -> Result<i32, Error> {
    let dir = current_dir()?;
    let source = settings.source(&dir);
    let Judged {
        mut report,
        manifest,
        results_checks,
        baseline,
        ..
    } = judged;
    let key = manifest_key(settings)?;
    let unjudged = |why: String| {
        eprintln!("error: {why}");
        publish_unjudged(
            settings,
            args,
            &key,
            &format!("no verdict: {why}"),
            source.clone(),
            exit_code::INVALID_INPUT,
        )
    };
    let manifest_environments: Vec<String> = manifest
        .environments
        .iter()
        .map(|e| e.name.as_str().to_owned())
        .collect();
    let (files, files_manifest) =
        match files_report(settings, args, &dir, &source, &manifest_environments)? {
            Ok(files) => files,
            Err(why) => return unjudged(why),
        };
    // Nor a check of the manifest the results came from, where that is another.
    if let Some(check) = files_manifest
        .checks
        .iter()
        .find(|c| results_checks.iter().any(|r| r == c.id.as_str()))
    {
        return unjudged(format!(
            "the files' check `{}` is a check of the manifest the results were produced from: name the files' checks apart with `{{check}}` in the glob",
            check.id
        ));
    }
    if let Err(why) = report.add_files(files) {
        return unjudged(why);
    }
    // Compared with the base branch as one report: the base's files are in its report.
    let mut both = manifest;
    both.checks.extend(files_manifest.checks);
    match apply_baseline(settings, &mut report, &both, baseline) {
        Ok(()) => publish_built(settings, args, report),
        Err(error) if error.exit_code() == exit_code::INVALID_INPUT => unjudged(error.to_string()),
        Err(error) => Err(error),
    }
}

/// `report --files`: the runner reports a workflow already makes, judged as the legs'
/// results over the environments expected. Whatever keeps them from being read (a glob
/// with no match, a file no reader knows, a name that is no environment's) is this
/// commit's NOT VERIFIED with the reason, as a report with no results is.
fn from_files(settings: &Settings, args: &ReportArgs) -> Result<i32, Error> {
    let trust = &args.trust;
    if trust.base_manifest.is_some() {
        return Err(Error::Usage(
            "--files judges the reports by the matrix of their files: there is no manifest for --base-manifest to be compared with"
                .to_owned(),
        ));
    }
    if let Some(path) = &settings.manifest {
        return Err(Error::Usage(format!(
            "--files alone judges the reports by the matrix of their files: to add them to --manifest {}, give the folders of its legs' results too (`report RESULTS --files GLOB`)",
            path.display()
        )));
    }
    let dir = current_dir()?;
    // A manifest found here is not what these files are judged by: said, never silent.
    if let Ok(crate::manifest::Found::Yaml(path) | crate::manifest::Found::Cargo(path)) =
        crate::manifest::discover(&dir)
        && !settings.quiet
    {
        eprintln!(
            "note: --files judges the report files alone: {} (its checks, environments and min-tests) is not read; to add the files to it, give the folders of its legs' results too (`report RESULTS --files GLOB`)",
            path.display()
        );
    }
    let source = settings.source(&dir);
    match judged_files(settings, args, &dir, &source)? {
        Ok(report) => publish_built(settings, args, report),
        Err(why) => {
            eprintln!("error: {why}");
            publish_unjudged(
                settings,
                args,
                imported::FILES_MANIFEST,
                &format!("no verdict: {why}"),
                source,
                exit_code::INVALID_INPUT,
            )
        }
    }
}

/// The report of the files `args` name, found under `dir`, compared with the baseline;
/// why none can be judged (the legs expected unknown, a file that cannot be read, a
/// baseline that cannot be taken), which is this commit's NOT VERIFIED, never a report
/// left unpublished.
fn judged_files(
    settings: &Settings,
    args: &ReportArgs,
    dir: &std::path::Path,
    source: &crate::results::Source,
) -> Result<Result<Report, String>, Error> {
    let (mut report, manifest) = match files_report(settings, args, dir, source, &[])? {
        Ok(files) => files,
        Err(why) => return Ok(Err(why)),
    };
    match compare_with_baseline(settings, &args.trust, &mut report, &manifest) {
        Ok(()) => Ok(Ok(report)),
        Err(error) if error.exit_code() == exit_code::INVALID_INPUT => Ok(Err(error.to_string())),
        Err(error) => Err(error),
    }
}

/// The report of the files `args` name, found under `dir`, and the matrix it was judged
/// by; the environments expected are the flags', else `expected` (a manifest's), else
/// those the files name. Why none can be judged, as [`judged_files`].
fn files_report(
    settings: &Settings,
    args: &ReportArgs,
    dir: &std::path::Path,
    source: &crate::results::Source,
    expected: &[String],
) -> Result<Result<(Report, Manifest), String>, Error> {
    let mut environments = match expected_environments(settings, args) {
        Ok(environments) => environments,
        Err(why) => return Ok(Err(why)),
    };
    let mut expected_from = if args.environments_from_job.is_some() {
        "the legs of --environments-from-job"
    } else {
        "--environments"
    };
    if environments.is_empty() && !expected.is_empty() {
        environments = expected.to_vec();
        expected_from = "the manifest's (give others with --environments)";
    }
    let spec = Spec {
        patterns: args.files.clone(),
        environments,
        expected_from: expected_from.to_owned(),
        environment: args.environment.clone(),
        root: dir.to_path_buf(),
    };
    let redactor = quoter(args.publish.token.as_deref()).shared_redactor();
    let imported = match imported::import(&spec, source, redactor) {
        Ok(imported) => imported,
        Err(why) => return Ok(Err(why)),
    };
    if !settings.quiet {
        for note in &imported.notes {
            eprintln!("note: {note}");
        }
    }
    let report = Report::build_judged(
        &imported.manifest,
        imported.partials,
        &crate::results::jobs::Jobs::NotChecked,
        None,
    );
    Ok(Ok((report, imported.manifest)))
}

/// The environments `--files` expects: `--environments` as given, or the legs of the
/// matrix job `--environments-from-job` names, as the service (GitHub, GitLab) lists
/// this run's jobs (what the pull request's code cannot write). Whatever keeps them from being known is the reason
/// of a NOT VERIFIED, never an empty list that expects nothing.
fn expected_environments(settings: &Settings, args: &ReportArgs) -> Result<Vec<String>, String> {
    let Some(job) = &args.environments_from_job else {
        return imported::expected_list(&args.environments);
    };
    let jobs = crate::cli::engine::of(settings, args.publish.ci)
        .this_run_jobs(settings)
        .map_err(|why| format!("--environments-from-job `{job}`: {why}"))?;
    imported::environments_of_jobs(job, jobs.iter().map(|j| j.name.as_str()))
}

/// Publishes, for the commit `source` names, a NOT VERIFIED with `reason` under the
/// comment key `key` (no result could be judged); the command's exit code is `code`.
fn publish_unjudged(
    settings: &Settings,
    args: &ReportArgs,
    key: &str,
    reason: &str,
    source: crate::results::Source,
    code: i32,
) -> Result<i32, Error> {
    let mut report = Report::unjudged(key, reason);
    report.source = source;
    publish_built(settings, args, report)?;
    Ok(code)
}

/// Why a report could not judge any result, for the published NOT VERIFIED.
fn unjudged_reason(error: &Error) -> String {
    match error {
        Error::Merge(MergeError::Nothing(_) | MergeError::NoSuchPath { .. }) => format!(
            "no results to judge ({error}): the plan, or every environment's run, failed or was cancelled"
        ),
        _ => format!("no verdict: {error}"),
    }
}

/// Writes, shows and publishes a report `report` made (cancelled with `--cancelled`).
fn publish_built(settings: &Settings, args: &ReportArgs, mut report: Report) -> Result<i32, Error> {
    if args.cancelled {
        report.mark_cancelled();
    }
    let options = settings.table_options(&report, quoter(args.publish.token.as_deref()));
    // Quoted once: the report file, the table and every publication use the same text.
    let report = Quoted::from_report(report, &options.quoter);
    write_report_replacing(&args.out, report.report())?;
    print_stdout(&render::render_quoted(&report, Format::Table, &options)?)?;
    crate::cli::engine::of(settings, args.publish.ci).publish_report(
        settings,
        &report,
        &args.out,
        &args.publish,
        true,
    )
}
