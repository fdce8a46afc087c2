//! `history`: the verification history in SQLite — `add` imports reports, `show`
//! summarises each check × environment over the last runs.

#[path = "history_sync.rs"]
mod sync;
#[path = "history_tests.rs"]
mod tests_health;

use std::fmt::Write as _;
use std::path::PathBuf;

use tabled::builder::Builder;
use tabled::settings::Style;

use crate::cli::args::{
    HistoryAddArgs, HistoryArgs, HistoryCommand, HistoryHtmlArgs, HistoryPruneArgs,
    HistoryShowArgs, KeepArgs, ShowFormat,
};
use crate::cli::settings::{Settings, quoter};
use crate::cli::{Error, judge, print_stdout};
use crate::exit_code;
use crate::history::{self, Added, History, Origin, Stats, StatsQuery};
use crate::render::text::{counted, short_commit};
use crate::untrusted::Quoter;

pub(super) fn run(settings: &Settings, args: &HistoryArgs) -> Result<i32, Error> {
    let path = args
        .history
        .clone()
        .unwrap_or_else(|| PathBuf::from(history::DEFAULT_PATH));
    match &args.command {
        HistoryCommand::Add(add_args) => add(settings, &path, add_args),
        HistoryCommand::Show(show_args) => show(&path, show_args),
        HistoryCommand::Tests(tests_args) => tests_health::run(settings, &path, tests_args),
        HistoryCommand::Html(html_args) => html(&path, html_args),
        HistoryCommand::Sync(sync_args) => sync::run(settings, &path, sync_args),
        HistoryCommand::Prune(prune_args) => prune(settings, &path, prune_args),
    }
}

/// What the history keeps: the limits `keep` names (one alone is the only rule), else
/// the manifest's `history:` (found as every command finds it, or `--manifest`), else
/// the defaults (200 runs or 90 days). A manifest that is there but cannot be read
/// keeps everything, with a warning: nothing recorded is removed on a guess.
pub(super) fn retention(
    settings: &Settings,
    keep: &KeepArgs,
    branch: Option<String>,
) -> history::Retention {
    let named = |keep_runs, keep_days| history::Retention {
        keep_runs,
        keep_days,
        branch: branch.clone(),
    };
    if keep.keep_runs.is_some() || keep.keep_days.is_some() {
        return named(keep.keep_runs, keep.keep_days);
    }
    let found = match &settings.manifest {
        Some(_) => true,
        None => std::env::current_dir()
            .ok()
            .is_some_and(|here| crate::manifest::discover(&here).is_ok()),
    };
    if found {
        match settings.load_manifest() {
            Ok(manifest) => {
                let h = manifest.history;
                if h.keep_runs.is_some() || h.keep_days.is_some() {
                    return named(h.keep_runs, h.keep_days);
                }
            }
            Err(e) => {
                eprintln!(
                    "warning: the manifest cannot be read, so its `history:` is not known: nothing is pruned ({e})"
                );
                return named(Some(0), None);
            }
        }
    }
    history::Retention {
        branch,
        ..history::Retention::default()
    }
}

/// What a prune did, in a line: what went, what each rule kept, the file's size.
pub(super) fn pruned_line(
    path: &std::path::Path,
    r: &history::Retention,
    p: &history::Pruned,
) -> String {
    let mib = |bytes: u64| format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0));
    let mut kept = Vec::new();
    if let Some(n) = r.keep_runs.filter(|n| *n > 0) {
        kept.push(format!("{} by --keep-runs {n}", p.kept_by_count));
    }
    if let Some(d) = r.keep_days.filter(|d| *d > 0) {
        kept.push(format!("{} by --keep-days {d}", p.kept_by_age));
    }
    if p.kept_as_baseline > 0 {
        kept.push(format!(
            "{} only as its branch's latest run a baseline can be",
            p.kept_as_baseline
        ));
    }
    if r.keeps_everything() {
        kept.push("all: a limit of 0 keeps everything".to_owned());
    }
    format!(
        "pruned {}{}: removed {} ({}, {}, {}); kept {} ({}); {} → {}",
        path.display(),
        r.branch
            .as_deref()
            .map(|b| format!(" (branch {b})"))
            .unwrap_or_default(),
        counted(p.runs_removed, "run", "runs"),
        counted(p.pairs_removed, "pair", "pairs"),
        counted(p.tests_removed, "test outcome", "test outcomes"),
        counted(p.shards_removed, "shard", "shards"),
        counted(p.runs_kept, "run", "runs"),
        kept.join(", "),
        mib(p.bytes_before),
        mib(p.bytes_after)
    )
}

fn prune(
    settings: &Settings,
    path: &std::path::Path,
    args: &HistoryPruneArgs,
) -> Result<i32, Error> {
    let mut history = existing(path)?;
    let retention = retention(settings, &args.keep, args.branch.clone());
    let pruned = history.prune(&retention)?;
    print_stdout(&format!("{}\n", pruned_line(path, &retention, &pruned)))?;
    Ok(exit_code::OK)
}

/// The database at `path`, which must exist (reading never creates one).
fn existing(path: &std::path::Path) -> Result<History, Error> {
    if !path.exists() {
        return Err(Error::InvalidInput(format!(
            "history database `{}` does not exist; `history add REPORT` makes it",
            path.display()
        )));
    }
    Ok(History::open(path)?)
}

fn html(path: &std::path::Path, args: &HistoryHtmlArgs) -> Result<i32, Error> {
    let history = existing(path)?;
    let page = history::page(
        &history,
        &history::PageQuery {
            branch: args.branch.clone(),
            last: args.last,
            pull_requests: args.include_prs,
            web: std::env::var("GITHUB_SERVER_URL")
                .ok()
                .filter(|w| !w.is_empty()),
        },
    )?;
    match &args.out {
        Some(out) => std::fs::write(out, page).map_err(|source| Error::Io {
            context: format!("cannot write `{}`", out.display()),
            source,
        })?,
        None => print_stdout(&page)?,
    }
    Ok(exit_code::OK)
}

/// Imports each report in its own transaction: one that cannot be read is said and
/// skipped (exit 4 at the end), the others are kept.
fn add(settings: &Settings, path: &std::path::Path, args: &HistoryAddArgs) -> Result<i32, Error> {
    let mut history = History::open(path)?;
    let origin = Origin {
        branch: args.branch.clone().or_else(branch_from_env),
        recorded_at: None,
    };
    let mut code = exit_code::OK;
    let mut out = String::new();
    for report_path in &args.reports {
        let report = match judge::report_file(report_path) {
            Ok(report) => report,
            Err(e) => {
                eprintln!("warning: skipped `{}`: {e}", report_path.display());
                code = exit_code::INVALID_INPUT;
                continue;
            }
        };
        match history.add(&report, &origin)? {
            Added::New { pairs, tests } => {
                let _ = writeln!(
                    out,
                    "recorded {}: {} ({}, {} kept)",
                    report_path.display(),
                    report.verdict.as_str(),
                    counted(pairs as u64, "pair", "pairs"),
                    counted(tests as u64, "test outcome", "test outcomes")
                );
            }
            Added::AlreadyRecorded => {
                let _ = writeln!(out, "already recorded {}", report_path.display());
            }
        }
    }
    // The history's retention, after each import: what it removed, when it removed any.
    let retention = retention(settings, &args.keep, None);
    let pruned = history.prune(&retention)?;
    if pruned.runs_removed > 0 {
        let _ = writeln!(out, "{}", pruned_line(path, &retention, &pruned));
    }
    let _ = writeln!(
        out,
        "{}: {}",
        history.path().display(),
        counted(history.run_count()?, "run", "runs")
    );
    print_stdout(&out)?;
    Ok(code)
}

/// The ref this workflow run is for: the pushed branch, or `N/merge` for a pull
/// request's run. Never the pull request's head branch: a fork's branch may be called
/// `main`, and its run must not pass for the base branch's when baselines are chosen.
fn branch_from_env() -> Option<String> {
    std::env::var("GITHUB_REF_NAME")
        .ok()
        .filter(|value| !value.is_empty())
}

fn show(path: &std::path::Path, args: &HistoryShowArgs) -> Result<i32, Error> {
    let history = existing(path)?;
    let stats = history::stats(
        &history,
        &StatsQuery {
            check: args.check.clone(),
            environment: args.env.clone(),
            branch: args.branch.clone(),
            last: args.last,
            pull_requests: args.include_prs,
        },
    )?;
    // The strings come from imported reports (pull-request code wrote them): cleaned
    // and redacted for every format, neutralised too for the table people read.
    let quoter = quoter(None);
    let stats = sanitised(stats, &quoter);
    let text = match args.format {
        ShowFormat::Json => serde_json::to_string_pretty(&stats).unwrap_or_default() + "\n",
        ShowFormat::Csv => csv(&stats)?,
        ShowFormat::Table => table(&stats, &quoter),
    };
    print_stdout(&text)?;
    Ok(exit_code::OK)
}

fn percent(rate: f64) -> String {
    format!("{:.0}%", rate * 100.0)
}

fn ms(value: Option<u64>) -> String {
    value.map_or_else(|| "–".to_owned(), |ms| format!("{ms} ms"))
}

/// `312 → 298` (first and last of the window), or the one count.
fn trend(tests: &[u64]) -> String {
    match tests {
        [] => "–".to_owned(),
        [one] => one.to_string(),
        [first, .., last] => format!("{first} → {last}"),
    }
}

fn last_failure(stats: &Stats) -> String {
    stats.last_failure.as_ref().map_or_else(
        || "–".to_owned(),
        |f| {
            let commit = f.commit.as_deref().map(short_commit).unwrap_or("?");
            format!("{} at {commit} ({})", f.result, f.recorded_at)
        },
    )
}

/// `stats` with every string from a report cleaned of escapes and control characters,
/// and its secrets masked.
fn sanitised(mut stats: Vec<Stats>, quoter: &Quoter) -> Vec<Stats> {
    for s in &mut stats {
        s.check = quoter.sanitise(&s.check);
        s.environment = quoter.sanitise(&s.environment);
        if let Some(f) = &mut s.last_failure {
            f.recorded_at = quoter.sanitise(&f.recorded_at);
            f.result = quoter.sanitise(&f.result);
            for text in [&mut f.commit, &mut f.run_id, &mut f.summary]
                .into_iter()
                .flatten()
            {
                *text = quoter.sanitise(text);
            }
        }
    }
    stats
}

fn table(stats: &[Stats], quoter: &Quoter) -> String {
    if stats.is_empty() {
        return "no runs recorded match\n".to_owned();
    }
    // Split pairs: how their shards' times spread in the last run that split them.
    let split = stats.iter().any(|s| s.shards.is_some());
    let mut builder = Builder::default();
    let mut header = vec![
        "Check",
        "Environment",
        "Runs",
        "Pass rate",
        "Flaky rate",
        "p50",
        "p95",
        "Tests",
    ];
    if split {
        header.push("Shards (last run)");
    }
    header.push("Last failure");
    builder.push_record(header);
    for s in stats {
        let mut record = vec![
            quoter.quote(&s.check),
            quoter.quote(&s.environment),
            s.runs.to_string(),
            percent(s.pass_rate),
            percent(s.flaky_rate),
            ms(s.duration_p50_ms),
            ms(s.duration_p95_ms),
            trend(&s.tests),
        ];
        if split {
            record.push(s.shards.as_ref().map_or_else(
                || "–".to_owned(),
                |sh| {
                    format!(
                        "{}: slowest {} ms, fastest {} ms",
                        sh.shards, sh.slowest_ms, sh.fastest_ms
                    )
                },
            ));
        }
        record.push(quoter.quote(&last_failure(s)));
        builder.push_record(record);
    }
    let mut table = builder.build();
    table.with(Style::rounded());
    format!("{table}\n")
}

fn csv(stats: &[Stats]) -> Result<String, Error> {
    let rows = stats.iter().map(|s| {
        let opt = |v: Option<u64>| v.map(|n| n.to_string()).unwrap_or_default();
        let failure = s.last_failure.as_ref();
        vec![
            s.check.clone(),
            s.environment.clone(),
            s.runs.to_string(),
            s.passed.to_string(),
            format!("{:.4}", s.pass_rate),
            s.flaky.to_string(),
            format!("{:.4}", s.flaky_rate),
            opt(s.duration_p50_ms),
            opt(s.duration_p95_ms),
            opt(s.tests.first().copied()),
            opt(s.tests.last().copied()),
            failure.map(|f| f.result.clone()).unwrap_or_default(),
            failure.and_then(|f| f.commit.clone()).unwrap_or_default(),
            failure.map(|f| f.recorded_at.clone()).unwrap_or_default(),
            opt(s.shards.as_ref().map(|sh| u64::from(sh.shards))),
            opt(s.shards.as_ref().map(|sh| sh.slowest_ms)),
            opt(s.shards.as_ref().map(|sh| sh.fastest_ms)),
        ]
    });
    csv_text(
        &[
            "check",
            "environment",
            "runs",
            "passed",
            "pass_rate",
            "flaky",
            "flaky_rate",
            "duration_p50_ms",
            "duration_p95_ms",
            "tests_first",
            "tests_last",
            "last_failure_result",
            "last_failure_commit",
            "last_failure_at",
            "shards",
            "shard_slowest_ms",
            "shard_fastest_ms",
        ],
        rows,
    )
}

/// `header` and `rows` as CSV text (`history show`, `history tests`). A cell a
/// spreadsheet would take for a formula (one that begins with `=`, `+`, `-`, `@`, a tab
/// or a carriage return, and is no number) begins with `'`: names come from the tests
/// of pull requests.
fn csv_text(header: &[&str], rows: impl IntoIterator<Item = Vec<String>>) -> Result<String, Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let io = |e: csv::Error| Error::InvalidInput(format!("CSV: {e}"));
    writer.write_record(header).map_err(io)?;
    for row in rows {
        writer
            .write_record(row.iter().map(|cell| inert_cell(cell).into_owned()))
            .map_err(io)?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| Error::InvalidInput(format!("CSV: {e}")))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// `cell` as a spreadsheet reads it as text: a formula's first character behind a `'`.
fn inert_cell(cell: &str) -> std::borrow::Cow<'_, str> {
    let formula = cell.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if formula && cell.trim().parse::<f64>().is_err() {
        std::borrow::Cow::Owned(format!("'{cell}"))
    } else {
        std::borrow::Cow::Borrowed(cell)
    }
}

#[cfg(test)]
mod csv_tests {
    use super::*;

    #[test]
    fn cells_a_spreadsheet_would_run_are_text() {
        let text = csv_text(
            &["name", "n"],
            [
                vec!["=cmd|' /C calc'!A0".to_owned(), "-1".to_owned()],
                vec!["+1+1".to_owned(), "2.5".to_owned()],
                vec!["@SUM(A1)".to_owned(), "-0.25".to_owned()],
                vec!["\t=1".to_owned(), "test_ok".to_owned()],
                vec!["-x".to_owned(), "a-b".to_owned()],
            ],
        )
        .unwrap();
        assert_eq!(
            text,
            "name,n\n'=cmd|' /C calc'!A0,-1\n'+1+1,2.5\n'@SUM(A1),-0.25\n'\t=1,test_ok\n'-x,a-b\n"
        );
    }
}
