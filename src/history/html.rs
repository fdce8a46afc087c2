//! `history html`: one self-contained page (no script, no external asset) — the verdict
//! of each run over time, a check × run heat map, trend charts in inline SVG, the
//! flakiest and slowest checks, and each pair's failures folded under it.

use std::collections::HashMap;
use std::fmt::Write as _;

use rusqlite::params;

use super::show::{Stats, StatsQuery, stats};
use super::{History, HistoryError, last_runs, sqlite};
use crate::render::provenance::{commit_page, run_page};
use crate::render::text::{escape_html as esc, short_commit};

/// Which runs the page covers.
#[derive(Debug, Clone, Default)]
pub struct PageQuery {
    pub branch: Option<String>,
    /// The most recent runs shown.
    pub last: u32,
    /// Pull requests' runs shown too (left out by default).
    pub pull_requests: bool,
    /// The GitHub web root runs and commits are linked under (`https://github.com`).
    pub web: Option<String>,
}

/// One run, oldest first on the page.
struct Run {
    id: i64,
    repository: Option<String>,
    recorded_at: String,
    commit: Option<String>,
    run_id: Option<String>,
    branch: Option<String>,
    verdict: String,
}

/// One pair's cell in one run.
struct Cell {
    result: String,
    flaky: bool,
    tests: Option<u64>,
    summary: Option<String>,
}

/// The most failures listed under one pair.
const FAILURES_LISTED: usize = 20;
/// The most pairs in the flakiest and slowest lists.
const TOP: usize = 10;

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem;color:#1f2328;max-width:90rem}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0}
th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left}
th{background:#f6f8fa;font-weight:600}
table.heat td.c{width:1.1rem;height:1.1rem;padding:0}
table.heat th.r{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:400;font-size:.75rem;padding:.3rem 0;white-space:nowrap}
table.heat th.r a{color:#0969da;text-decoration:none}
ul.tests{margin:.2rem 0 .4rem;color:#a40e26}
td.pass{background:#2da44e}td.fail{background:#cf222e}td.flaky{background:#d4a72c}
td.missing{background:#8c959f}td.none{background:#fff}
.legend span{display:inline-block;width:.9rem;height:.9rem;margin:0 .3rem 0 1rem;vertical-align:middle}
details{margin:.3rem 0;border:1px solid #d0d7de;border-radius:6px;padding:.3rem .7rem}
summary{cursor:pointer;font-weight:600}
svg text{font-size:11px;fill:#59636e}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
";

/// The page for the last `query.last` runs.
pub fn page(history: &History, query: &PageQuery) -> Result<String, HistoryError> {
    let runs = runs(history, query)?;
    let cells = cells(history, query)?;
    let summary = stats(
        history,
        &StatsQuery {
            check: None,
            environment: None,
            branch: query.branch.clone(),
            last: query.last,
            pull_requests: query.pull_requests,
        },
    )?;
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>Verification history</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
         <h1>Verification history</h1>\n"
    );
    if runs.is_empty() {
        out.push_str("<p>No runs recorded match.</p>\n</body>\n</html>\n");
        return Ok(out);
    }
    let verified = runs.iter().filter(|r| r.verdict == "VERIFIED").count();
    let _ = writeln!(
        out,
        "<p>{} runs, {} → {}{}: {verified} VERIFIED, {} not.</p>",
        runs.len(),
        esc(&runs[0].recorded_at),
        esc(&runs[runs.len() - 1].recorded_at),
        query
            .branch
            .as_deref()
            .map_or_else(String::new, |b| format!(" on <code>{}</code>", esc(b))),
        runs.len() - verified
    );
    verdicts(&runs, &mut out);
    trends(&runs, &cells, &mut out);
    let links = Links {
        web: query
            .web
            .as_deref()
            .unwrap_or("https://github.com")
            .trim_end_matches('/'),
    };
    heat_map(&runs, &cells, &summary, &links, &mut out);
    rankings(&summary, &mut out);
    failures(history, &runs, &cells, &summary, &links, &mut out)?;
    out.push_str("</body>\n</html>\n");
    Ok(out)
}

fn runs(history: &History, query: &PageQuery) -> Result<Vec<Run>, HistoryError> {
    let path = history.path();
    let runs = last_runs(query.pull_requests);
    let mut statement = history
        .connection()
        .prepare(&format!(
            "SELECT id, recorded_at, commit_sha, run_id, branch, verdict, repository FROM runs
             WHERE id IN ({runs})
             ORDER BY recorded_at, id"
        ))
        .map_err(|e| sqlite(path, e))?;
    let rows = statement
        .query_map(params![query.branch, query.last], |r| {
            Ok(Run {
                id: r.get(0)?,
                recorded_at: r.get(1)?,
                commit: r.get(2)?,
                run_id: r.get(3)?,
                branch: r.get(4)?,
                verdict: r.get(5)?,
                repository: r.get(6)?,
            })
        })
        .map_err(|e| sqlite(path, e))?;
    rows.collect::<Result<_, _>>().map_err(|e| sqlite(path, e))
}

/// Every pair's cell in the runs `query` selects, by (check, environment, run id).
fn cells(
    history: &History,
    query: &PageQuery,
) -> Result<HashMap<(String, String, i64), Cell>, HistoryError> {
    let path = history.path();
    let runs = last_runs(query.pull_requests);
    let mut statement = history
        .connection()
        .prepare(&format!(
            "SELECT p.run, p.check_id, p.environment, p.result, p.retried_flaky,
                    p.tests_flaky, p.tests_passed, p.tests_failed, p.summary
             FROM pairs p WHERE p.run IN ({runs})"
        ))
        .map_err(|e| sqlite(path, e))?;
    let rows = statement
        .query_map(params![query.branch, query.last], |r| {
            let run: i64 = r.get(0)?;
            let passed: Option<i64> = r.get(6)?;
            let failed: Option<i64> = r.get(7)?;
            let tests_flaky: Option<i64> = r.get(5)?;
            let retried: bool = r.get(4)?;
            Ok((
                (r.get::<_, String>(1)?, r.get::<_, String>(2)?, run),
                Cell {
                    result: r.get(3)?,
                    flaky: retried || tests_flaky.unwrap_or(0) > 0,
                    tests: passed.map(|p| u64::try_from(p + failed.unwrap_or(0)).unwrap_or(0)),
                    summary: r.get(8)?,
                },
            ))
        })
        .map_err(|e| sqlite(path, e))?;
    rows.collect::<Result<_, _>>().map_err(|e| sqlite(path, e))
}

/// A run as a short label: its commit, else its workflow run, else its number.
fn label(run: &Run) -> String {
    match (&run.commit, &run.run_id) {
        (Some(commit), _) => short_commit(commit).to_owned(),
        (None, Some(id)) => format!("run {id}"),
        (None, None) => format!("#{}", run.id),
    }
}

fn tooltip(run: &Run) -> String {
    let mut text = format!("{} · {} · {}", label(run), run.recorded_at, run.verdict);
    if let Some(branch) = &run.branch {
        text.push_str(&format!(" · {branch}"));
    }
    text
}

/// The verdict of each run, as a strip of squares.
fn verdicts(runs: &[Run], out: &mut String) {
    out.push_str("<h2>Verdict per run</h2>\n");
    let size = 14;
    let width = runs.len() * (size + 2) + 2;
    let _ = writeln!(
        out,
        "<svg role=\"img\" aria-label=\"verdict per run\" width=\"{width}\" height=\"{}\" viewBox=\"0 0 {width} {}\">",
        size + 4,
        size + 4
    );
    for (i, run) in runs.iter().enumerate() {
        let colour = match run.verdict.as_str() {
            "VERIFIED" => "#2da44e",
            "NOT_VERIFIED" => "#cf222e",
            _ => "#8c959f",
        };
        let _ = writeln!(
            out,
            "<rect x=\"{}\" y=\"2\" width=\"{size}\" height=\"{size}\" rx=\"2\" fill=\"{colour}\"><title>{}</title></rect>",
            2 + i * (size + 2),
            esc(&tooltip(run))
        );
    }
    out.push_str("</svg>\n");
    out.push_str(
        "<p class=\"legend\"><span style=\"background:#2da44e\"></span>VERIFIED\
         <span style=\"background:#cf222e\"></span>NOT VERIFIED\
         <span style=\"background:#8c959f\"></span>SKIPPED</p>\n",
    );
}

/// Two line charts over the runs: the share of pairs that passed, and the tests run.
fn trends(runs: &[Run], cells: &HashMap<(String, String, i64), Cell>, out: &mut String) {
    let mut passed = vec![0u64; runs.len()];
    let mut total = vec![0u64; runs.len()];
    let mut tests = vec![0u64; runs.len()];
    let index: HashMap<i64, usize> = runs.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
    for ((_, _, run), cell) in cells {
        if let Some(&i) = index.get(run) {
            total[i] += 1;
            passed[i] += u64::from(cell.result == "PASS");
            tests[i] += cell.tests.unwrap_or(0);
        }
    }
    let share: Vec<f64> = passed
        .iter()
        .zip(&total)
        .map(|(&p, &t)| {
            if t == 0 {
                0.0
            } else {
                p as f64 * 100.0 / t as f64
            }
        })
        .collect();
    out.push_str("<h2>Trends</h2>\n");
    chart("pairs passed, %", &share, Some(100.0), "#2da44e", out);
    if tests.iter().any(|&n| n > 0) {
        let counts: Vec<f64> = tests.iter().map(|&n| n as f64).collect();
        chart("tests run", &counts, None, "#0969da", out);
    } else {
        out.push_str("<p>No test counts recorded in these runs.</p>\n");
    }
}

/// A line chart of `values` (one per run), from 0 to `max` (else the largest value).
fn chart(title: &str, values: &[f64], max: Option<f64>, colour: &str, out: &mut String) {
    let (width, height, left, bottom) = (640.0, 140.0, 48.0, 20.0);
    let top = max
        .unwrap_or_else(|| values.iter().copied().fold(0.0, f64::max))
        .max(1.0);
    let step = if values.len() > 1 {
        (width - left - 8.0) / (values.len() - 1) as f64
    } else {
        0.0
    };
    let point = |i: usize, v: f64| {
        (
            left + step * i as f64,
            8.0 + (height - bottom - 8.0) * (1.0 - v / top),
        )
    };
    let _ = writeln!(
        out,
        "<figure><svg role=\"img\" aria-label=\"{title}\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\">"
    );
    let (x0, y0) = point(0, 0.0);
    let (_, y1) = point(0, top);
    let _ = writeln!(
        out,
        "<line x1=\"{x0}\" y1=\"{y0}\" x2=\"{}\" y2=\"{y0}\" stroke=\"#d0d7de\"/>\
         <line x1=\"{x0}\" y1=\"{y1}\" x2=\"{x0}\" y2=\"{y0}\" stroke=\"#d0d7de\"/>\
         <text x=\"4\" y=\"{}\">{}</text><text x=\"4\" y=\"{y0}\">0</text>",
        width - 8.0,
        y1 + 4.0,
        format_value(top)
    );
    let points: Vec<String> = values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let (x, y) = point(i, v);
            format!("{x:.1},{y:.1}")
        })
        .collect();
    let _ = writeln!(
        out,
        "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"/>",
        points.join(" ")
    );
    for (i, &v) in values.iter().enumerate() {
        let (x, y) = point(i, v);
        let _ = writeln!(
            out,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"2.5\" fill=\"{colour}\"><title>{}</title></circle>",
            format_value(v)
        );
    }
    let _ = writeln!(
        out,
        "</svg><figcaption>{}</figcaption></figure>",
        esc(title)
    );
}

fn format_value(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Pairs as rows, runs as columns, each cell coloured by its result.
fn heat_map(
    runs: &[Run],
    cells: &HashMap<(String, String, i64), Cell>,
    pairs: &[Stats],
    links: &Links<'_>,
    out: &mut String,
) {
    out.push_str(
        "<h2>Check × run</h2>\n<table class=\"heat\">\n<tr><th>Check</th><th>Environment</th>",
    );
    // Each run's column is labelled with its commit (or run), linked to the run.
    for run in runs {
        let text = esc(&label(run));
        let _ = match links.run(run) {
            Some(url) => write!(
                out,
                "<th class=\"r\" title=\"{}\"><a href=\"{}\">{text}</a></th>",
                esc(&tooltip(run)),
                esc(&url)
            ),
            None => write!(
                out,
                "<th class=\"r\" title=\"{}\">{text}</th>",
                esc(&tooltip(run))
            ),
        };
    }
    out.push_str("</tr>\n");
    for pair in pairs {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td>",
            esc(&pair.check),
            esc(&pair.environment)
        );
        for run in runs {
            let key = (pair.check.clone(), pair.environment.clone(), run.id);
            let (class, what) = match cells.get(&key) {
                None => ("none", "not in this run".to_owned()),
                Some(cell) if cell.result == "PASS" && cell.flaky => {
                    ("flaky", "PASS (flaky)".to_owned())
                }
                Some(cell) if cell.result == "PASS" => ("pass", "PASS".to_owned()),
                Some(cell) if cell.result == "MISSING" => ("missing", "MISSING".to_owned()),
                Some(cell) => (
                    "fail",
                    format!("FAIL: {}", cell.summary.as_deref().unwrap_or_default()),
                ),
            };
            let _ = write!(
                out,
                "<td class=\"c {class}\" title=\"{}\"></td>",
                esc(&format!("{} · {what}", label(run)))
            );
        }
        out.push_str("</tr>\n");
    }
    out.push_str(
        "</table>\n<p class=\"legend\"><span style=\"background:#2da44e\"></span>passed\
        <span style=\"background:#d4a72c\"></span>passed, flaky\
        <span style=\"background:#cf222e\"></span>failed\
        <span style=\"background:#8c959f\"></span>missing</p>\n",
    );
}

/// The flakiest and the slowest pairs.
fn rankings(pairs: &[Stats], out: &mut String) {
    let mut flakiest: Vec<&Stats> = pairs.iter().filter(|s| s.flaky > 0).collect();
    flakiest.sort_by(|a, b| b.flaky_rate.total_cmp(&a.flaky_rate));
    out.push_str("<h2>Flakiest</h2>\n");
    if flakiest.is_empty() {
        out.push_str("<p>No flaky pair in these runs.</p>\n");
    } else {
        out.push_str("<table>\n<tr><th>Check</th><th>Environment</th><th>Flaky rate</th><th>Runs</th></tr>\n");
        for s in flakiest.iter().take(TOP) {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{:.0}%</td><td>{}</td></tr>",
                esc(&s.check),
                esc(&s.environment),
                s.flaky_rate * 100.0,
                s.runs
            );
        }
        out.push_str("</table>\n");
    }
    let mut slowest: Vec<&Stats> = pairs
        .iter()
        .filter(|s| s.duration_p95_ms.is_some())
        .collect();
    slowest.sort_by_key(|s| std::cmp::Reverse(s.duration_p95_ms));
    out.push_str("<h2>Slowest</h2>\n<table>\n<tr><th>Check</th><th>Environment</th><th>p50</th><th>p95</th></tr>\n");
    for s in slowest.iter().take(TOP) {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{} ms</td><td>{} ms</td></tr>",
            esc(&s.check),
            esc(&s.environment),
            s.duration_p50_ms.unwrap_or(0),
            s.duration_p95_ms.unwrap_or(0)
        );
    }
    out.push_str("</table>\n");
}

/// Each pair that failed in these runs, folded, with its failures newest first: the
/// run (linked), its commit (linked), when, the summary and the failing tests. A run
/// where the pair had no result is counted as missing, not as a failure.
fn failures(
    history: &History,
    runs: &[Run],
    cells: &HashMap<(String, String, i64), Cell>,
    pairs: &[Stats],
    links: &Links<'_>,
    out: &mut String,
) -> Result<(), HistoryError> {
    let failed = |pair: &Stats, run: &Run| {
        cells
            .get(&(pair.check.clone(), pair.environment.clone(), run.id))
            .filter(|c| c.result != "PASS" && c.result != "MISSING")
    };
    let failing: Vec<(&Stats, usize)> = pairs
        .iter()
        .map(|p| (p, runs.iter().filter(|r| failed(p, r).is_some()).count()))
        .filter(|(_, n)| *n > 0)
        .collect();
    if failing.is_empty() {
        return Ok(());
    }
    let path = history.path();
    let mut tests = history
        .connection()
        .prepare(
            "SELECT suite, name FROM tests WHERE run = ?1 AND check_id = ?2 AND environment = ?3
               AND outcome IN ('failed', 'error') ORDER BY rowid LIMIT ?4",
        )
        .map_err(|e| sqlite(path, e))?;
    out.push_str("<h2>Failures</h2>\n");
    for (pair, failed_runs) in failing {
        let missing = runs
            .iter()
            .filter(|r| {
                cells
                    .get(&(pair.check.clone(), pair.environment.clone(), r.id))
                    .is_some_and(|c| c.result == "MISSING")
            })
            .count();
        let _ = writeln!(
            out,
            "<details><summary>{} in {}: failed in {failed_runs} of {} runs{}</summary>\n<ul>",
            esc(&pair.check),
            esc(&pair.environment),
            pair.runs,
            if missing > 0 {
                format!(" ({missing} with no result)")
            } else {
                String::new()
            }
        );
        let mut listed = 0;
        for run in runs.iter().rev() {
            let Some(cell) = failed(pair, run) else {
                continue;
            };
            if listed == FAILURES_LISTED {
                out.push_str("<li>… and earlier ones</li>\n");
                break;
            }
            listed += 1;
            let names: Vec<String> = tests
                .query_map(
                    params![
                        run.id,
                        pair.check,
                        pair.environment,
                        TESTS_LISTED as i64 + 1
                    ],
                    |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
                )
                .map_err(|e| sqlite(path, e))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| sqlite(path, e))?
                .into_iter()
                .map(
                    |(suite, name)| match crate::results::suite_shown(&suite, &name) {
                        "" => name,
                        suite => format!("{suite} › {name}"),
                    },
                )
                .collect();
            let _ = write!(
                out,
                "<li>{} {} — {}: {}",
                links.run_html(run),
                esc(&run.recorded_at),
                esc(&cell.result),
                esc(cell.summary.as_deref().unwrap_or_default())
            );
            if !names.is_empty() {
                out.push_str("<ul class=\"tests\">");
                for name in names.iter().take(TESTS_LISTED) {
                    let _ = write!(out, "<li><code>{}</code></li>", esc(name));
                }
                if names.len() > TESTS_LISTED {
                    out.push_str("<li>… and more</li>");
                }
                out.push_str("</ul>");
            }
            out.push_str("</li>\n");
        }
        out.push_str("</ul>\n</details>\n");
    }
    Ok(())
}

/// The most failing tests named under one failure.
const TESTS_LISTED: usize = 5;

/// Where runs and commits are linked.
struct Links<'a> {
    web: &'a str,
}

impl Links<'_> {
    /// The run's page, when its repository and id are known and safe to link.
    fn run(&self, run: &Run) -> Option<String> {
        run_page(self.web, run.repository.as_deref()?, run.run_id.as_deref()?)
    }

    /// The run's commit, linked to it, and a link to the run: `<a>abc1234</a> (run)`.
    fn run_html(&self, run: &Run) -> String {
        let page = run
            .commit
            .as_deref()
            .zip(run.repository.as_deref())
            .and_then(|(commit, repo)| Some((commit, commit_page(self.web, repo, commit)?)));
        let mut html = match page {
            Some((commit, url)) => format!(
                "<a href=\"{}\"><code>{}</code></a>",
                esc(&url),
                esc(short_commit(commit))
            ),
            None => format!("<code>{}</code>", esc(&label(run))),
        };
        if let Some(url) = self.run(run) {
            let _ = write!(html, " (<a href=\"{}\">run</a>)", esc(&url));
        }
        html
    }
}
