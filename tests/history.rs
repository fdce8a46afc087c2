//! The history database: real SQLite files in temp dirs, written by the real binary —
//! import, idempotence, a concurrent writer, a kill mid-import, files that are not ours.

mod common;

use std::path::Path;
use std::process::{Command as StdCommand, Stdio};

use common::Project;
use serde_json::Value;

/// A project whose `unit` passes in linux and fails in macos, merged into `report.json`.
fn reported() -> Project {
    reported_with_tests(2)
}

/// [`reported`], `unit`'s report listing `tests` tests.
fn reported_with_tests(tests: usize) -> Project {
    let project = Project::new(concat!(
        "version: 1\n",
        "environments: [{name: linux}, {name: macos}]\n",
        "checks:\n",
        "  - id: unit\n",
        "    test: cp fixture.xml junit.xml && test $VERIFY_MATRIX_ENV = linux\n",
        "    reports: junit.xml\n",
        "  - { id: lint, run: 'true' }\n",
    ));
    let cases: String = (0..tests)
        .map(|i| format!("<testcase classname=\"t\" name=\"test_{i}\" time=\"0.5\"/>"))
        .collect();
    project.write(
        "fixture.xml",
        &format!("<testsuite name=\"s\">{cases}</testsuite>"),
    );
    project.run_envs(&["linux", "macos"]);
    project.merge_into("results", "report.json");
    project
}

/// `report.json` as a new run of the workflow: run id `run`, written to `name`.
fn as_run(project: &Project, run: u64, name: &str) {
    let mut report = project.json("report.json");
    report["source"]["repository"] = "o/r".into();
    report["source"]["run_id"] = run.to_string().into();
    report["source"]["run_attempt"] = 1.into();
    report["source"]["commit"] = format!("{run:040x}").into();
    project.write(name, &report.to_string());
}

fn history(project: &Project, args: &[&str]) -> std::process::Output {
    project
        .std_cmd()
        .arg("history")
        .args(args)
        .args(["--history", "db/history.sqlite"])
        .output()
        .unwrap()
}

fn show(project: &Project) -> Value {
    let out = history(project, &["show", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn sqlite(project: &Project) -> rusqlite::Connection {
    rusqlite::Connection::open(project.path().join("db/history.sqlite")).unwrap()
}

/// Waits for each of `children`, each of which must succeed (its stderr shown if not).
fn all_succeed<const N: usize>(children: [std::process::Child; N]) {
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn count(db: &rusqlite::Connection, sql: &str) -> i64 {
    db.query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn reports_are_imported_once_and_summarised_per_pair() {
    let project = reported();
    as_run(&project, 1, "r1.json");
    as_run(&project, 2, "r2.json");
    let out = history(&project, &["add", "r1.json", "r2.json", "r1.json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("recorded r1.json: NOT_VERIFIED (4 pairs, 4 test outcomes kept)"),
        "{stdout}"
    );
    assert!(stdout.contains("already recorded r1.json"), "{stdout}");
    assert!(stdout.ends_with("db/history.sqlite: 2 runs\n"), "{stdout}");
    // The same attempt again, in a later command: still one row.
    history(&project, &["add", "r2.json"]);
    let db = sqlite(&project);
    assert_eq!(count(&db, "SELECT count(*) FROM runs"), 2);
    assert_eq!(count(&db, "SELECT count(*) FROM pairs"), 8);
    assert_eq!(
        count(&db, "SELECT count(*) FROM tests WHERE outcome = 'passed'"),
        8
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM runs WHERE repository = 'o/r' AND run_id = '2' AND verdict = 'NOT_VERIFIED'"
        ),
        1
    );
    let stats = show(&project);
    let unit_macos = stats
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["check"] == "unit" && s["environment"] == "macos")
        .unwrap();
    assert_eq!(unit_macos["runs"], 2);
    assert_eq!(unit_macos["pass_rate"], 0.0);
    assert_eq!(unit_macos["tests"], serde_json::json!([2, 2]));
    assert_eq!(unit_macos["last_failure"]["result"], "FAIL");
    assert_eq!(unit_macos["last_failure"]["commit"], format!("{:040x}", 2));
    let unit_linux = &stats[0];
    assert_eq!(
        (
            unit_linux["check"].as_str(),
            unit_linux["environment"].as_str()
        ),
        (Some("unit"), Some("linux"))
    );
    assert_eq!(unit_linux["pass_rate"], 1.0);
    assert_eq!(unit_linux["last_failure"], Value::Null);
    // The table and CSV say the same.
    let table = String::from_utf8(history(&project, &["show", "--check", "unit"]).stdout).unwrap();
    assert!(table.contains("100%") && table.contains("0%"), "{table}");
    assert!(!table.contains("lint"), "{table}");
    let csv =
        String::from_utf8(history(&project, &["show", "--format", "csv", "--env", "macos"]).stdout)
            .unwrap();
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("check,environment,runs,passed,pass_rate")
    );
    assert!(
        lines.next().unwrap().starts_with("unit,macos,2,0,0.0000"),
        "{csv}"
    );
}

#[test]
fn the_history_flag_goes_before_or_after_the_subcommand() {
    let project = reported();
    let out = project
        .std_cmd()
        .args(["history", "--history", "first.sqlite", "add", "report.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(project.path().join("first.sqlite").exists());
}

#[test]
fn a_file_that_is_not_our_database_is_refused_and_left_alone() {
    let project = reported();
    std::fs::create_dir_all(project.path().join("db")).unwrap();
    let path = project.path().join("db/history.sqlite");
    // Not SQLite at all.
    std::fs::write(&path, "these are my notes, not a database\n".repeat(200)).unwrap();
    let before = std::fs::read(&path).unwrap();
    let out = history(&project, &["add", "report.json"]);
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not an SQLite database; it was left as it is"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // Another program's SQLite database.
    std::fs::remove_file(&path).unwrap();
    {
        let db = rusqlite::Connection::open(&path).unwrap();
        db.execute_batch("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine');")
            .unwrap();
    }
    let out = history(&project, &["add", "report.json"]);
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a cargo-verify-matrix history"),
        "{out:?}"
    );
    assert_eq!(count(&sqlite(&project), "SELECT count(*) FROM notes"), 1);
    // Ours, from a newer build.
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        history(&project, &["add", "report.json"]).status.code(),
        Some(0)
    );
    sqlite(&project)
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let out = history(&project, &["show"]);
    assert_eq!(out.status.code(), Some(4));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("schema version 99 is newer"),
        "{out:?}"
    );
}

#[test]
fn a_report_that_cannot_be_read_is_skipped_and_the_others_kept() {
    let project = reported();
    project.write("broken.json", "{\"format_version\": 2, \"rows\": [");
    let out = history(&project, &["add", "broken.json", "report.json"]);
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("skipped `broken.json`"));
    assert_eq!(count(&sqlite(&project), "SELECT count(*) FROM runs"), 1);
}

#[test]
fn concurrent_writers_both_land() {
    let project = reported();
    let mut names = Vec::new();
    for run in 0..40 {
        let name = format!("r{run}.json");
        as_run(&project, run, &name);
        names.push(name);
    }
    // Two writers at once, each with its own 20, the first two to open the file: both
    // may create and migrate it.
    let spawn = |files: &[String]| {
        project
            .std_cmd()
            .args(["history", "--history", "db/history.sqlite", "add"])
            .args(files)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let a = spawn(&names[..20]);
    let b = spawn(&names[20..]);
    all_succeed([a, b]);
    let db = sqlite(&project);
    assert_eq!(count(&db, "SELECT count(*) FROM runs"), 40);
    assert_eq!(count(&db, "SELECT count(*) FROM pairs"), 160);
}

#[test]
fn a_kill_mid_import_leaves_every_recorded_run_whole() {
    // 4,000 tests a run: an import of 100 runs takes a second or more, and is killed
    // early on.
    let project = reported_with_tests(2_000);
    let mut names = Vec::new();
    for run in 0..100 {
        let name = format!("k{run}.json");
        as_run(&project, run, &name);
        names.push(name);
    }
    let db_path = project.path().join("db/history.sqlite");
    let mut child = project
        .std_cmd()
        .args(["history", "--history", "db/history.sqlite", "add"])
        .args(&names)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once some runs are in, while it is still importing.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if std::time::Instant::now() > deadline {
            panic!("the import recorded nothing in 60 s");
        }
        if db_path.exists()
            && rusqlite::Connection::open(&db_path)
                .and_then(|db| {
                    db.query_row("SELECT count(*) FROM runs", [], |r| r.get::<_, i64>(0))
                })
                .is_ok_and(|n| n >= 3)
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let _ = StdCommand::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status();
    let status = child.wait().unwrap();
    assert!(!status.success(), "the import ended before it was killed");
    let db = sqlite(&project);
    let runs = count(&db, "SELECT count(*) FROM runs");
    assert!((3..100).contains(&runs), "{runs}");
    // Every recorded run has all its pairs and tests: no half-written run.
    assert_eq!(count(&db, "SELECT count(*) FROM pairs"), runs * 4);
    assert_eq!(count(&db, "SELECT count(*) FROM tests"), runs * 4_000);
    assert_eq!(
        db.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0))
            .unwrap(),
        "ok"
    );
    // And the next import goes on from there.
    let out = history(&project, &["add", &names[99]]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(Path::new(&db_path).exists());
}

/// Six runs: unit fails in macos in runs 2 and 5, and passes on a retry in run 4.
fn six_runs(project: &Project) {
    let report = project.json("report.json");
    for run in 1..=6u64 {
        let mut r = report.clone();
        r["source"]["repository"] = "o/r".into();
        r["source"]["run_id"] = run.to_string().into();
        r["source"]["commit"] = format!("{run:040x}").into();
        let failing = run == 2 || run == 5;
        for row in r["rows"].as_array_mut().unwrap() {
            if row["check"] == "unit" && row["environment"] == "macos" {
                row["result"] = if failing { "FAIL" } else { "PASS" }.into();
                row["exit_code"] = if failing { 1 } else { 0 }.into();
                row["detail"]["exit_code"] = if failing { 1 } else { 0 }.into();
                row["detail"]["status"] = if failing { "FAIL" } else { "PASS" }.into();
                row["detail"]["flaky"] = (run == 4).into();
            }
        }
        r["verdict"] = if failing { "NOT_VERIFIED" } else { "VERIFIED" }.into();
        project.write(&format!("run{run}.json"), &r.to_string());
        let out = history(
            project,
            &["add", "--branch", "main", &format!("run{run}.json")],
        );
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }
}

#[test]
fn the_dashboard_shows_verdicts_the_heat_map_and_the_failures() {
    let project = reported();
    six_runs(&project);
    let out = history(
        &project,
        &["html", "--out", "dashboard.html", "--branch", "main"],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let page = project.read("dashboard.html");
    assert!(page.contains("<p>6 runs, "), "{page}");
    assert!(page.contains(": 4 VERIFIED, 2 not.</p>"), "{page}");
    // One verdict square per run, red for runs 2 and 5.
    assert_eq!(page.matches("<rect ").count(), 6, "{page}");
    assert_eq!(
        page.matches("fill=\"#cf222e\"><title>").count(),
        2,
        "{page}"
    );
    // The heat map: 4 pairs × 6 runs, macos's unit red twice and amber once.
    assert_eq!(page.matches("<td class=\"c ").count(), 24, "{page}");
    assert_eq!(page.matches("<td class=\"c fail\"").count(), 2, "{page}");
    assert_eq!(page.matches("<td class=\"c flaky\"").count(), 1, "{page}");
    assert!(
        page.contains("<details><summary>unit in macos: failed in 2 of 6 runs</summary>"),
        "{page}"
    );
    assert!(
        page.contains("<h2>Flakiest</h2>") && page.contains("<td>17%</td>"),
        "{page}"
    );
    // Self-contained: no script, nothing fetched (links to the runs are only links).
    assert!(!page.contains("<script") && !page.contains("src=") && !page.contains("<link"));
    // Each run's column is labelled with its commit and linked to its run.
    assert!(
        page.contains("<th class=\"r\" title=\"0000000 · ")
            && page.contains("<a href=\"https://github.com/o/r/actions/runs/2\">0000000</a></th>"),
        "{page}"
    );
    // Another branch has none of them.
    let other = String::from_utf8(history(&project, &["html", "--branch", "dev"]).stdout).unwrap();
    assert!(other.contains("No runs recorded match."), "{other}");
}

#[test]
fn a_version_1_database_is_migrated_and_keeps_its_runs() {
    let project = reported();
    std::fs::create_dir_all(project.path().join("db")).unwrap();
    {
        // The schema version 1 wrote, with one run in it.
        let db = sqlite(&project);
        db.execute_batch(concat!(
            "CREATE TABLE runs (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE,",
            " repository TEXT, branch TEXT, commit_sha TEXT, pr INTEGER, run_id TEXT,",
            " run_attempt INTEGER, recorded_at TEXT NOT NULL, manifest_path TEXT NOT NULL,",
            " manifest_digest TEXT NOT NULL, verdict TEXT NOT NULL, reasons TEXT NOT NULL);",
            "CREATE INDEX runs_by_branch ON runs (repository, branch, recorded_at);",
            "CREATE TABLE pairs (run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,",
            " check_id TEXT NOT NULL, environment TEXT NOT NULL, position INTEGER NOT NULL,",
            " result TEXT NOT NULL, status TEXT, exit_code INTEGER, duration_ms INTEGER,",
            " tests_passed INTEGER, tests_failed INTEGER, tests_skipped INTEGER,",
            " tests_flaky INTEGER, retried_flaky INTEGER NOT NULL, summary TEXT,",
            " PRIMARY KEY (run, check_id, environment)) WITHOUT ROWID;",
            "CREATE TABLE tests (run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,",
            " check_id TEXT NOT NULL, environment TEXT NOT NULL, suite TEXT NOT NULL,",
            " name TEXT NOT NULL, outcome TEXT NOT NULL, duration_ms INTEGER);",
            "CREATE INDEX tests_by_pair ON tests (run, check_id, environment);",
            "INSERT INTO runs VALUES (1, 'run:o/r:1:1:verify-matrix.yml', 'o/r', 'main', NULL,",
            " NULL, '1', 1, '2026-01-01T00:00:00Z', 'verify-matrix.yml', 'sha256:0', 'VERIFIED', '[]');",
            "INSERT INTO pairs VALUES (1, 'lint', 'linux', 0, 'PASS', 'pass', 0, 5, NULL, NULL,",
            " NULL, NULL, 0, 'passed');",
            "PRAGMA application_id = 1447905363; PRAGMA user_version = 1;",
        ))
        .unwrap();
    }
    as_run(&project, 2, "run2.json");
    let out = history(&project, &["add", "--branch", "main", "run2.json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let db = sqlite(&project);
    assert_eq!(count(&db, "PRAGMA user_version"), 5);
    assert_eq!(count(&db, "SELECT count(*) FROM runs"), 2);
    // The old run's pair has no executed count; the new run's test gate has one.
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM pairs WHERE run = 1 AND tests_executed IS NULL"
        ),
        1
    );
    assert_eq!(
        count(
            &db,
            "SELECT tests_executed FROM pairs WHERE check_id = 'unit' AND environment = 'linux' AND run = 2"
        ),
        2
    );
    let check: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}

#[test]
fn two_local_runs_that_agree_on_every_exit_code_and_duration_are_two_runs() {
    let project = reported();
    // No workflow run: the report's content is what tells runs apart. The second ran
    // one test fewer, with the same exit codes and durations.
    let first = project.json("report.json");
    let mut second = first.clone();
    let unit = second["rows"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|r| r["check"] == "unit" && r["environment"] == "linux")
        .unwrap();
    unit["detail"]["tests_executed"] = 1.into();
    project.write("a.json", &first.to_string());
    project.write("b.json", &second.to_string());
    let out = history(&project, &["add", "a.json", "b.json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let again = history(&project, &["add", "a.json"]);
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("already recorded a.json"),
        "{again:?}"
    );
    assert_eq!(count(&sqlite(&project), "SELECT count(*) FROM runs"), 2);
}

/// What an imported report says is printed without its terminal escapes: a forged
/// commit with an OSC 8 link, a screen clear and a bell reaches no terminal, in any
/// format of `history show`.
#[test]
fn history_show_prints_no_escapes_from_an_imported_report() {
    let project = reported();
    let mut report = project.json("report.json");
    report["source"]["commit"] =
        "\u{1b}]8;;https://evil.example\u{7}abc\u{1b}]8;;\u{7}\u{1b}[2J\u{7}\u{9b}2J\u{202e}def"
            .into();
    project.write("forged.json", &report.to_string());
    let added = history(&project, &["add", "forged.json"]);
    assert_eq!(added.status.code(), Some(0), "{added:?}");
    for format in ["csv", "json", "table"] {
        let out = history(&project, &["show", "--format", format]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("abc"), "{format}: {text}");
        for bad in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'] {
            assert!(!text.contains(bad), "{format} holds {bad:?}: {text:?}");
        }
    }
}

/// Eight first writers of one new file, 400 times over: each opens (creating and
/// migrating it) without ever taking another's half-made file for a foreign one.
#[test]
fn eight_first_writers_never_see_a_half_made_file() {
    let dir = tempfile::tempdir().unwrap();
    for trial in 0..400u64 {
        let path = dir.path().join(format!("h{trial}.sqlite"));
        let barrier = std::sync::Barrier::new(8);
        std::thread::scope(|scope| {
            let opened: Vec<_> = (0..8u64)
                .map(|writer| {
                    let (barrier, path) = (&barrier, &path);
                    scope.spawn(move || {
                        barrier.wait();
                        // Staggered, so that later writers find the file half made.
                        std::thread::sleep(std::time::Duration::from_micros(
                            writer * (100 + trial % 7 * 60),
                        ));
                        cargo_verify_matrix::history::History::open(path).map(|_| ())
                    })
                })
                .collect();
            for writer in opened {
                if let Err(e) = writer.join().unwrap() {
                    panic!("trial {trial}: {e}");
                }
            }
        });
    }
}

#[test]
fn the_dashboard_dates_runs_when_they_ran_names_failing_tests_and_leaves_out_pull_requests() {
    let project = reported();
    let report = project.json("report.json");
    // Three runs of the branch, one of a pull request; the third lost its macos leg.
    for (run, at, pr) in [
        (1u64, "2026-01-02T03:04:05Z", None),
        (2, "2026-01-03T03:04:05Z", None),
        (3, "2026-01-04T03:04:05Z", Some(7u64)),
        (4, "2026-01-05T03:04:05Z", None),
    ] {
        let mut r = report.clone();
        r["source"]["repository"] = "o/r".into();
        r["source"]["run_id"] = run.to_string().into();
        r["source"]["commit"] = format!("{run}{}", "a".repeat(39)).into();
        r["finished_at"] = at.into();
        // unit's first test is the one that fails in macos.
        for row in r["rows"].as_array_mut().unwrap() {
            if row["check"] == "unit" && row["environment"] == "macos" {
                row["detail"]["tests"]["cases"][0]["outcome"] = "failed".into();
            }
        }
        if let Some(pr) = pr {
            r["source"]["pr"] = pr.into();
            r["source"]["event"] = "pull_request".into();
        }
        if run == 4 {
            let rows = r["rows"].as_array_mut().unwrap();
            rows.retain(|row| row["environment"] != "macos");
            r["missing"] = serde_json::json!([
                {"check": "unit", "environment": "macos", "kind": "no_result", "reason": "no results"},
                {"check": "lint", "environment": "macos", "kind": "no_result", "reason": "no results"}
            ]);
        }
        project.write(&format!("run{run}.json"), &r.to_string());
        let out = history(
            &project,
            &["add", "--branch", "main", &format!("run{run}.json")],
        );
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }
    let out = history(&project, &["html", "--out", "dashboard.html"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let page = project.read("dashboard.html");
    // When the runs ran (their reports say), not when they were imported; the pull
    // request's run is left out.
    assert!(
        page.contains("<p>3 runs, 2026-01-02T03:04:05Z → 2026-01-05T03:04:05Z: "),
        "{page}"
    );
    assert!(!page.contains("3aaaaaa"), "{page}");
    // unit failed in macos in runs 1 and 2 (its failing test named, the commit and the
    // run linked); run 4 had no result there, which is not a failure.
    assert!(
        page.contains(
            "<details><summary>unit in macos: failed in 2 of 3 runs (1 with no result)</summary>"
        ),
        "{page}"
    );
    assert!(
        page.contains("<a href=\"https://github.com/o/r/commit/2aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"><code>2aaaaaa</code></a> (<a href=\"https://github.com/o/r/actions/runs/2\">run</a>) 2026-01-03T03:04:05Z — FAIL: "),
        "{page}"
    );
    assert!(
        page.contains("<ul class=\"tests\"><li><code>test_0</code></li>"),
        "{page}"
    );
    assert!(!page.contains("lint in macos: failed"), "{page}");
    // With the pull requests: four runs.
    let out = history(&project, &["html", "--include-prs"]);
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains("<p>4 runs, "), "{page}");
    // `history show` leaves them out too.
    let out = history(&project, &["show", "--format", "json"]);
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    let unit_linux = shown
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["check"] == "unit" && s["environment"] == "linux")
        .unwrap();
    assert_eq!(unit_linux["runs"], 3, "{shown:#}");
    let out = history(&project, &["show", "--format", "json", "--include-prs"]);
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        shown
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["check"] == "unit" && s["environment"] == "linux")
            .unwrap()["runs"],
        4
    );
}

/// The run ids recorded, in the order they were.
fn run_ids(db: &rusqlite::Connection) -> Vec<String> {
    db.prepare("SELECT run_id FROM runs ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// `report.json` as run `run` of the workflow, finished at `at`, started by `event`.
fn as_run_at(project: &Project, run: u64, at: &str, event: &str) -> String {
    let mut report = project.json("report.json");
    report["source"]["repository"] = "o/r".into();
    report["source"]["run_id"] = run.to_string().into();
    report["source"]["run_attempt"] = 1.into();
    report["source"]["event"] = event.into();
    report["finished_at"] = at.into();
    let name = format!("r{run}.json");
    project.write(&name, &report.to_string());
    name
}

/// Retention: runs go with everything that is only theirs, in one transaction, the file
/// is compacted; a run is kept by count, by age, or as its branch's latest run that a
/// baseline can be; a limit of 0 keeps everything; each import applies the retention.
#[test]
fn prune_keeps_what_its_rules_keep_and_removes_the_rest_whole() {
    let project = reported_with_tests(50);
    let now = cargo_verify_matrix::results::source::now_rfc3339();
    let old = |day: u32| format!("2020-01-{day:02}T00:00:00Z");
    // main: four old runs and two recent; feature: two old; release: one old push.
    let add = |run: u64, at: String, branch: &str, event: &str| {
        let name = as_run_at(&project, run, &at, event);
        let out = history(
            &project,
            &["add", "--branch", branch, "--keep-runs", "0", &name],
        );
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    };
    for run in 1..=4 {
        add(run, old(run as u32), "main", "push");
    }
    add(5, now.clone(), "main", "push");
    add(6, now.clone(), "main", "push");
    add(7, old(10), "feature", "push");
    add(8, old(11), "feature", "push");
    add(9, old(12), "release", "push");
    let db = sqlite(&project);
    assert_eq!(count(&db, "SELECT count(*) FROM runs"), 9);
    let tests_before = count(&db, "SELECT count(*) FROM tests");
    drop(db);

    let out = history(
        &project,
        &["prune", "--keep-runs", "2", "--keep-days", "30"],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        text.starts_with("pruned db/history.sqlite: removed 5 runs (20 pairs, "),
        "{text}"
    );
    assert!(
        text.contains("kept 4 runs (2 by --keep-runs 2, 2 by --keep-days 30, 2 only as its branch's latest run a baseline can be)"),
        "{text}"
    );
    let db = sqlite(&project);
    let ids = run_ids(&db);
    assert_eq!(ids, ["5", "6", "8", "9"]);
    // Nothing of a removed run is left.
    for table in ["pairs", "tests", "shards"] {
        assert_eq!(
            count(
                &db,
                &format!("SELECT count(*) FROM {table} WHERE run NOT IN (SELECT id FROM runs)")
            ),
            0,
            "{table}"
        );
    }
    assert_eq!(
        count(&db, "SELECT count(*) FROM tests") * 9,
        tests_before * 4
    );
    drop(db);

    // One branch alone; a limit of 0 keeps everything.
    let out = history(&project, &["prune", "--branch", "main", "--keep-runs", "1"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("removed 1 run ("),
        "{out:?}"
    );
    let out = history(&project, &["prune", "--keep-runs", "0"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("removed 0 runs ("),
        "{out:?}"
    );
    assert_eq!(count(&sqlite(&project), "SELECT count(*) FROM runs"), 3);

    // Each import applies the retention (here: the newest run, and the baselines).
    let name = as_run_at(&project, 10, &old(20), "pull_request");
    let out = history(
        &project,
        &["add", "--branch", "main", "--keep-runs", "1", &name],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("\npruned db/history.sqlite: removed 1 run ("),
        "{text}"
    );
    let db = sqlite(&project);
    let ids = run_ids(&db);
    // 6 is main's newest (by count, and its latest a baseline can be), 8 feature's,
    // 9 release's; 10, a pull request's old run, goes.
    assert_eq!(ids, ["6", "8", "9"]);
}

/// Bad input to the retention is a clear error that removes nothing; a prune and an
/// import at once lose nothing that should stay; the file shrinks on disk.
#[test]
fn prune_refuses_bad_limits_and_runs_beside_an_import() {
    let project = reported_with_tests(200);
    let mut names = Vec::new();
    for run in 1..=30 {
        names.push(as_run_at(
            &project,
            run,
            &format!("2020-02-{:02}T00:00:00Z", run.min(28)),
            "push",
        ));
    }
    let out = history(
        &project,
        &["add", "--branch", "main", "--keep-runs", "0"]
            .iter()
            .copied()
            .chain(names[..20].iter().map(String::as_str))
            .collect::<Vec<_>>(),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let size = || {
        std::fs::metadata(project.path().join("db/history.sqlite"))
            .unwrap()
            .len()
    };
    for bad in [
        &["prune", "--keep-runs", "-1"][..],
        &["prune", "--keep-days", "ninety"],
        &["prune", "--keep-runs", "1.5"],
    ] {
        let out = history(&project, bad);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {err}");
        assert!(err.contains("invalid value"), "{bad:?}: {err}");
    }
    assert_eq!(count(&sqlite(&project), "SELECT count(*) FROM runs"), 20);
    // Not a history: refused, left as it is.
    project.write("db/other.sqlite", "not a database at all");
    let out = project
        .std_cmd()
        .args(["history", "--history", "db/other.sqlite", "prune"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    assert_eq!(project.read("db/other.sqlite"), "not a database at all");

    // A prune to the newest 15 while 10 newer runs are imported: the newest 15 of the
    // 30 (or more) stay, and every run imported is whole.
    let before = size();
    let prune = project
        .std_cmd()
        .args([
            "history",
            "--history",
            "db/history.sqlite",
            "prune",
            "--keep-runs",
            "15",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let add = project
        .std_cmd()
        .args([
            "history",
            "--history",
            "db/history.sqlite",
            "add",
            "--branch",
            "main",
            "--keep-runs",
            "0",
        ])
        .args(&names[20..])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    all_succeed([prune, add]);
    let db = sqlite(&project);
    let runs = count(&db, "SELECT count(*) FROM runs");
    assert!((15..=25).contains(&runs), "{runs} runs");
    for run in 21..=30 {
        assert_eq!(
            count(
                &db,
                &format!("SELECT count(*) FROM runs WHERE run_id = '{run}'")
            ),
            1,
            "run {run} was imported and must stay"
        );
    }
    // Every run left is whole: its four pairs and its tests.
    assert_eq!(count(&db, "SELECT count(*) FROM pairs"), runs * 4);
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM (SELECT run FROM tests GROUP BY run)"
        ),
        runs
    );
    drop(db);
    let out = history(&project, &["prune", "--keep-runs", "5"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(" runs ("),
        "{out:?}"
    );
    assert!(size() < before, "the file shrinks: {} → {}", before, size());
}

/// The manifest's `history:` says what each import keeps when no flag does; a manifest
/// that is there but cannot be read prunes nothing (a warning says why).
#[test]
fn the_manifests_history_key_is_the_retention_of_each_import() {
    let project = reported();
    for run in 1..=4 {
        as_run_at(
            &project,
            run,
            &format!("2020-03-0{run}T00:00:00Z"),
            "pull_request",
        );
    }
    let out = history(
        &project,
        &["add", "--keep-runs", "0", "r1.json", "r2.json", "r3.json"],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let manifest = project.read("verify-matrix.yml");
    project.write(
        "verify-matrix.yml",
        &format!("{manifest}history: {{ keep-runs: 2 }}\n"),
    );
    let out = history(&project, &["add", "r4.json"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        text.contains("pruned db/history.sqlite: removed 2 runs (")
            && text.contains("2 by --keep-runs 2"),
        "{text}"
    );
    assert_eq!(run_ids(&sqlite(&project)), ["3", "4"]);
    // Broken: nothing is pruned on a guess.
    project.write(
        "verify-matrix.yml",
        "version: 1\nhistory: { keep-runs: 1 }\n",
    );
    let out = history(&project, &["prune"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        err.contains("warning: the manifest cannot be read"),
        "{err}"
    );
    assert_eq!(run_ids(&sqlite(&project)), ["3", "4"]);
}

/// A forged `history:` — a negative or non-numeric limit, a key it does not know — is a
/// manifest error naming the key; nothing is pruned and nothing recorded is lost.
#[test]
fn a_forged_history_key_is_a_manifest_error_and_prunes_nothing() {
    let project = reported();
    for run in 1..=3 {
        as_run_at(
            &project,
            run,
            &format!("2020-04-0{run}T00:00:00Z"),
            "pull_request",
        );
    }
    let out = history(
        &project,
        &["add", "--keep-runs", "0", "r1.json", "r2.json", "r3.json"],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let manifest = project.read("verify-matrix.yml");
    for (forged, says) in [
        ("history: { keep-runs: -1 }", "history.keep-runs"),
        ("history: { keep-days: ninety }", "history.keep-days"),
        ("history: { keep: 1 }", "unknown key `keep`"),
    ] {
        project.write("verify-matrix.yml", &format!("{manifest}{forged}\n"));
        let plan = project.std_cmd().arg("plan").output().unwrap();
        let err = String::from_utf8_lossy(&plan.stderr);
        assert_eq!(plan.status.code(), Some(4), "{forged}: {err}");
        assert!(err.contains(says), "{forged}: {err}");
        let out = history(&project, &["prune"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("warning: the manifest cannot be read"),
            "{forged}: {err}"
        );
        assert_eq!(run_ids(&sqlite(&project)), ["1", "2", "3"], "{forged}");
    }
}

/// `history tests`: five runs, of `main` and then of a branch; `test_0` is flaky in
/// linux twice, `test_1` fails in macos in the third run and again in the last (a
/// branch's). Each test's runs, failures and flaky runs — overall and on `main` — its
/// first failure and last green, in JSON, CSV and a table, from a real SQLite file
/// that keeps an index per test.
#[test]
fn history_tests_gives_each_tests_health_overall_and_on_the_base_branch() {
    let project = reported_with_tests(3);
    let report = project.json("report.json");
    for run in 1..=5u64 {
        let mut r = report.clone();
        r["source"]["repository"] = "o/r".into();
        r["source"]["run_id"] = run.to_string().into();
        r["source"]["commit"] = format!("{run}{}", "c".repeat(39)).into();
        r["finished_at"] = format!("2026-01-0{run}T03:04:05Z").into();
        for row in r["rows"].as_array_mut().unwrap() {
            let (check, env) = (row["check"].clone(), row["environment"].clone());
            if check != "unit" || !row["detail"]["tests"]["cases"].is_array() {
                continue;
            }
            let cases = &mut row["detail"]["tests"]["cases"];
            if env == "linux" && (run == 2 || run == 4) {
                cases[0]["outcome"] = "flaky".into();
            }
            if env == "macos" && (run == 3 || run == 5) {
                cases[1]["outcome"] = "failed".into();
            }
        }
        project.write(&format!("run{run}.json"), &r.to_string());
        let branch = if run == 5 { "feature" } else { "main" };
        let out = history(
            &project,
            &["add", "--branch", branch, &format!("run{run}.json")],
        );
        assert!(out.status.success(), "{out:?}");
    }
    let out = history(&project, &["tests", "--format", "json"]);
    assert!(out.status.success(), "{out:?}");
    let tests: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tests = tests.as_array().unwrap();
    // Only the tests that failed or were flaky; the flakiest first.
    let names: Vec<&str> = tests.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["test_0", "test_1"]);
    let flaky = &tests[0];
    assert_eq!(
        (
            flaky["runs"].as_u64(),
            flaky["failed"].as_u64(),
            flaky["flaky"].as_u64()
        ),
        (Some(10), Some(0), Some(2))
    );
    assert_eq!(
        (flaky["base_runs"].as_u64(), flaky["base_flaky"].as_u64()),
        (Some(8), Some(2))
    );
    assert_eq!(flaky["flaky_rate"], 0.2);
    let failing = &tests[1];
    assert_eq!(
        (
            failing["runs"].as_u64(),
            failing["failed"].as_u64(),
            failing["base_failed"].as_u64()
        ),
        (Some(10), Some(2), Some(1))
    );
    assert_eq!(
        failing["first_failure"]["commit"],
        format!("3{}", "c".repeat(39))
    );
    assert_eq!(
        failing["last_green"]["commit"],
        format!("5{}", "c".repeat(39))
    );
    assert_eq!(failing["failing_now"], true);
    // Sorted by failures instead; the window narrowed to the last two runs; --all.
    let out = history(
        &project,
        &[
            "tests", "--format", "json", "--sort", "failures", "--last", "2",
        ],
    );
    let tests: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(tests[0]["name"], "test_1");
    assert_eq!(tests[0]["runs"], 4);
    let out = history(&project, &["tests", "--format", "json", "--all"]);
    let tests: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(tests.as_array().unwrap().len(), 3);
    // CSV and the table.
    let out = history(&project, &["tests", "--format", "csv"]);
    let csv = String::from_utf8(out.stdout).unwrap();
    assert!(
        csv.starts_with("check,suite,name,id,runs,failed,flaky,failure_rate,flaky_rate,"),
        "{csv}"
    );
    assert!(
        csv.contains("unit,t,test_1,,10,2,0,0.2000,0.0000,8,1,0,"),
        "{csv}"
    );
    let out = history(&project, &["tests"]);
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("t › test_1"), "{table}");
    assert!(table.contains("2 of 10 (20%), failing now"), "{table}");
    assert!(table.contains("Flaky on main"), "{table}");
    // The index the documented queries use.
    let db = sqlite(&project);
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'tests_by_test'"
        ),
        1
    );
}

/// A pytest suite whose `test_upload_retry` fails when the seed `RUN` is 3 more than a
/// multiple of 4 (runs 3, 7, 11 and 15 of 20, and past 100), `test_broken` from run 18
/// on, and `test_ok` never.
const SEEDED_SUITE: &str = r#"import os

RUN = int(os.environ["RUN"])

def test_ok():
    assert True

def test_upload_retry():
    assert RUN % 4 != 3 or 16 < RUN < 100, "upload retried once too often"

def test_broken():
    assert RUN < 18, "broken since run 18"
"#;

/// Per-test health from a real history: the seeded suite run 20 times on `main` (run,
/// merge, `history add`), then read back. Its rates are what a query of the same
/// SQLite file says; `--suggest-quarantine` proposes the flaky test (not the steady
/// one) as entries the manifest accepts; and `--quarantined` lists it ready to leave
/// once it has passed enough runs in a row.
#[test]
fn health_from_twenty_real_runs_suggests_and_releases_a_quarantine() {
    let manifest = "version: 1\nenvironments: [{name: lin}]\nchecks:\n  - id: unit\n    test: python3 -m pytest -p no:cacheprovider --junitxml=out/junit.xml tests\n    reports: out/junit.xml\n    timeout: 2m\n";
    let project = Project::new(manifest);
    project.write("tests/__init__.py", "");
    project.write("tests/test_net.py", SEEDED_SUITE);
    for run in 1..=20u32 {
        let out = project
            .std_cmd()
            .arg("run")
            .env("RUN", run.to_string())
            .output()
            .unwrap();
        let failed = (run % 4 == 3 && run <= 16) || run >= 18;
        assert_eq!(
            out.status.code(),
            Some(i32::from(failed)),
            "run {run}: {out:?}"
        );
        let out = project
            .std_cmd()
            .args(["merge", "--out", "report.json", "verify-matrix-results"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(i32::from(failed)), "{out:?}");
        let mut report = project.json("report.json");
        report["source"]["repository"] = "o/r".into();
        report["source"]["run_id"] = run.to_string().into();
        report["source"]["commit"] = format!("{run:02}{}", "d".repeat(38)).into();
        report["finished_at"] = format!("2026-02-{run:02}T03:04:05Z").into();
        project.write(&format!("run{run}.json"), &report.to_string());
        let out = history(
            &project,
            &["add", "--branch", "main", &format!("run{run}.json")],
        );
        assert!(out.status.success(), "{out:?}");
    }
    let out = history(
        &project,
        &["tests", "--window", "20", "--format", "json", "--all"],
    );
    assert!(out.status.success(), "{out:?}");
    let tests: Value = serde_json::from_slice(&out.stdout).unwrap();
    let upload = tests
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "test_upload_retry")
        .unwrap();
    // The rates, as SQLite itself counts them.
    let db = sqlite(&project);
    let (runs, failed): (i64, i64) = db
        .query_row(
            "SELECT count(*), sum(t.outcome IN ('failed', 'error'))
             FROM tests t JOIN runs r ON r.id = t.run
             WHERE t.check_id = 'unit' AND t.name = 'test_upload_retry' AND r.branch = 'main'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((runs, failed), (20, 4));
    assert_eq!(upload["runs"], runs);
    assert_eq!(upload["failed"], failed);
    assert_eq!(upload["base_failed"], failed);
    assert_eq!(upload["failure_rate"], 0.2);
    assert_eq!(upload["passed_in_a_row"], 5);
    assert_eq!(
        upload["first_failure"]["commit"],
        format!("03{}", "d".repeat(38))
    );

    // Suggested, never written: the flaky test alone, as entries the manifest takes.
    let out = history(&project, &["tests", "--suggest-quarantine"]);
    assert!(out.status.success(), "{out:?}");
    let suggested = String::from_utf8(out.stdout).unwrap();
    assert!(!suggested.contains("test_ok"), "{suggested}");
    assert!(!suggested.contains("test_broken"), "{suggested}");
    assert_eq!(project.read("verify-matrix.yml"), manifest);
    let list = &suggested[suggested.find("- test:").expect("one entry")..];
    let entries: Vec<Value> = serde_yaml::from_str(list).unwrap();
    assert_eq!(entries.len(), 1, "{suggested}");
    assert_eq!(entries[0]["test"], "tests.test_net › test_upload_retry");
    assert_eq!(
        entries[0]["reason"],
        "flaky on main: failed in 4 and passed only on a retry in 0 of its last 20 runs"
    );
    let indented: String = list
        .lines()
        .map(|l| format!("      {l}\n"))
        .collect::<String>()
        .replace("owner: ''", "owner: '@ana'");
    project.write(
        "verify-matrix.yml",
        &format!("{manifest}    quarantine:\n{indented}"),
    );
    // Taken as written: a pull request's run where it fails holds it back. The other
    // failures carry their record on main, the new one first: a test main never ran,
    // then one failing on main too, then the held-back one.
    project.write(
        "tests/test_fresh.py",
        "def test_fresh():\n    assert False, 'new and broken'\n",
    );
    let out = project
        .std_cmd()
        .arg("run")
        .env("RUN", "103")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let unit = common::check_result(&project, "lin", "unit");
    assert_eq!(unit["test_counts"]["quarantined"], 1, "{unit}");
    assert_eq!(unit["test_counts"]["failed"], 3, "{unit}");
    let out = project
        .std_cmd()
        .args([
            "merge",
            "--out",
            "pr.json",
            "--format",
            "markdown",
            "--baseline-from",
            "history:main",
            "--history",
            "db/history.sqlite",
            "verify-matrix-results",
        ])
        .output()
        .unwrap();
    let markdown = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{markdown}");
    let at = |line: &str| {
        markdown
            .find(line)
            .unwrap_or_else(|| panic!("{line}\n{markdown}"))
    };
    let fresh = at("- tests.test_fresh › test_fresh (new: not run on main before)");
    let broken = at("- tests.test_net › test_broken (also failing on main since 18ddddd)");
    let held = at(
        "- tests.test_net › test_upload_retry (known flaky: failed 4 of last 20 on main) (🧪 quarantined)",
    );
    assert!(fresh < broken && broken < held, "{markdown}");
    // The answer's first line names the new failure.
    let first = markdown
        .lines()
        .find(|l| l.starts_with("- ❌ **"))
        .unwrap_or_else(|| panic!("{markdown}"));
    assert!(first.contains("test_fresh"), "{first}");
    // A result's own notes are never taken: merged without a history, there are none.
    let mut result = project.json("verify-matrix-results/verify-matrix-lin.json");
    result["checks"][0]["tests"]["cases"][0]["history"] = "known flaky: forged".into();
    project.write(
        "verify-matrix-results/verify-matrix-lin.json",
        &result.to_string(),
    );
    let out = project
        .std_cmd()
        .args(["merge", "--out", "plain.json", "verify-matrix-results"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!project.read("plain.json").contains("known flaky"));

    // Five passes in a row: ready to leave when five are asked for, held at six.
    let quarantined = |ready_after: &str| -> Value {
        let out = history(
            &project,
            &[
                "tests",
                "--quarantined",
                "--format",
                "json",
                "--ready-after",
                ready_after,
            ],
        );
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let rows = quarantined("5");
    assert_eq!(rows[0]["test"], "tests.test_net › test_upload_retry");
    assert_eq!(rows[0]["passed_in_a_row"], 5, "{rows}");
    assert_eq!(rows[0]["ready_to_leave"], true);
    assert_eq!(quarantined("6")[0]["ready_to_leave"], false);
    let out = history(&project, &["tests", "--quarantined", "--ready-after", "5"]);
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("ready to leave quarantine"), "{table}");
}

/// A window of no runs, or no run in a row to leave quarantine by, is a usage error
/// naming the value, never an empty answer.
#[test]
fn a_window_or_a_streak_of_zero_is_refused() {
    let project = reported();
    for args in [
        &["tests", "--window", "0"][..],
        &["tests", "--last", "0"],
        &["tests", "--quarantined", "--ready-after", "0"],
    ] {
        let out = history(&project, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("'0'") && err.contains("not in 1.."),
            "{args:?}: {err}"
        );
    }
}
