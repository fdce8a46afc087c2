//! Closed by construction: every result passes one intake before anything combines or
//! judges it. Honest results are made by real runs, then edited as a careful attacker
//! would; each edit is caught with its reason, whichever path the result takes (a
//! shard, a whole environment, an environment another one's result is renamed to).

mod common;

use common::Project;
use serde_json::Value;

/// `merge --out report.json FROM…`: (exit code, the report, stderr).
fn merge(project: &Project, from: &[&str]) -> (i32, Value, String) {
    let out = project
        .std_cmd()
        .args(["merge", "--out", "report.json"])
        .args(from)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = if project.path().join("report.json").exists() {
        project.json("report.json")
    } else {
        Value::Null
    };
    (out.status.code().unwrap(), report, stderr)
}

/// Edits the JSON file `relative` of `project` with `edit`.
fn edit(project: &Project, relative: &str, edit: impl FnOnce(&mut Value)) {
    let mut value = project.json(relative);
    edit(&mut value);
    project.write(relative, &value.to_string());
}

/// The check `id` of a result.
fn check<'a>(result: &'a mut Value, id: &str) -> &'a mut Value {
    result["checks"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["command_id"] == id)
        .unwrap()
}

/// The reasons of a report, one per line.
fn reasons(report: &Value) -> String {
    report["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `lin` split three ways; shard 2's `unit` fails (exit 1).
const SHARDED: &str = "version: 1
environments:
  - name: lin
    shards: 3
checks:
  - id: unit
    run: 'test {shard} -ne 2'
";

fn sharded() -> Project {
    let project = Project::new(SHARDED);
    run_shards(&project, 3, |k| i32::from(k == 2));
    project
}

/// `run --env lin --shard K/N --out sK` for each of the `n` shards of `project`, each
/// ending with `code(K)`.
fn run_shards(project: &Project, n: u32, code: impl Fn(u32) -> i32) {
    for k in 1..=n {
        let out = project
            .std_cmd()
            .args(["run", "--env", "lin", "--shard", &format!("{k}/{n}")])
            .args(["--out", &format!("s{k}")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code(k)), "{out:?}");
    }
}

/// An edit of a check's result: what it is, the edit, what the report says of it.
type Edit = (&'static str, fn(&mut Value), &'static str);

/// Each fact of a failing shard a claim of PASS cannot stand beside: whatever the
/// other shards say, the pair is NOT VERIFIED and the contradiction named with its shard.
#[test]
fn a_shards_claims_are_rederived_before_the_shards_are_combined() {
    let cases: [Edit; 4] = [
        (
            "status PASS, its exit code kept",
            |c| c["status"] = "PASS".into(),
            "shard 2/3: it claims PASS, but exit code 1 does not pass (required 0)",
        ),
        (
            "timed out",
            |c| {
                c["status"] = "PASS".into();
                c["exit_code"] = 0.into();
                c["timed_out"] = true.into();
            },
            "shard 2/3: it claims PASS, but it timed out",
        ),
        (
            "refused",
            |c| {
                c["status"] = "PASS".into();
                c["exit_code"] = 0.into();
                c["refused"] = "policy".into();
            },
            "shard 2/3: it claims PASS, but it was refused",
        ),
        (
            "no exit code",
            |c| {
                c["status"] = "PASS".into();
                c["exit_code"] = Value::Null;
            },
            "shard 2/3: it claims PASS, but it has no exit code",
        ),
    ];
    for (what, change, said) in cases {
        let project = sharded();
        edit(&project, "s2/verify-matrix-lin@2of3.json", |r| {
            change(check(r, "unit"))
        });
        let (code, report, stderr) = merge(&project, &["s1", "s2", "s3"]);
        assert_eq!(code, 1, "{what}: {stderr}");
        assert_eq!(report["verdict"], "NOT_VERIFIED", "{what}");
        let contradiction = &report["contradictions"][0];
        assert_eq!(contradiction["check"], "unit", "{what}: {report:#}");
        assert!(
            contradiction["reason"].as_str().unwrap().contains(said),
            "{what}: {contradiction}"
        );
        assert!(
            reasons(&report).contains("the result contradicts its facts"),
            "{what}: {}",
            reasons(&report)
        );
    }
}

/// A shard is one leg's slice: a copy of shard 1 relabelled shard 2, a shard that
/// claims the whole environment, a check reported twice in one shard — none stands.
#[test]
fn a_shard_is_the_slice_it_ran_once() {
    // Shard 1's file copied as shard 2 (only its `shard` changed).
    let project = sharded();
    let mut copy = project.json("s1/verify-matrix-lin@1of3.json");
    copy["shard"]["index"] = 2.into();
    std::fs::remove_dir_all(project.path().join("s2")).unwrap();
    project.write("s2/verify-matrix-lin@2of3.json", &copy.to_string());
    let (code, report, _) = merge(&project, &["s1", "s2", "s3"]);
    assert_eq!(code, 1);
    let why = report["contradictions"][0]["reason"].as_str().unwrap();
    assert!(
        why.contains("shard 2/3: it records slice 1/3, but shard 2/3 runs slice 2/3"),
        "{why}"
    );

    // Shard 1's file alone, claiming to be the whole environment.
    let project = sharded();
    edit(&project, "s1/verify-matrix-lin@1of3.json", |r| {
        r.as_object_mut().unwrap().remove("shard");
    });
    let (code, report, _) = merge(&project, &["s1"]);
    assert_eq!(code, 1);
    let why = report["contradictions"][0]["reason"].as_str().unwrap();
    assert!(
        why.contains("it records slice 1/3, but the whole environment runs slice 1/1"),
        "{why}"
    );

    // Shard 2 keeps its failing `unit` and adds shard 1's passing one after it.
    let project = sharded();
    let passing = project.json("s1/verify-matrix-lin@1of3.json")["checks"][0].clone();
    edit(&project, "s2/verify-matrix-lin@2of3.json", |r| {
        let mut passing = passing;
        passing["sharded"]["slice"]["index"] = 2.into();
        r["checks"].as_array_mut().unwrap().push(passing);
    });
    let (code, report, _) = merge(&project, &["s1", "s2", "s3"]);
    assert_ne!(code, 0);
    assert_eq!(report["verdict"], "NOT_VERIFIED");
    let why = report["contradictions"][0]["reason"].as_str().unwrap();
    assert!(
        why.contains("shard 2/3: it is reported 2 times in one result"),
        "{why}"
    );
}

/// Results of one merge are of one manifest, one commit and one run: a file that
/// embeds another manifest under the same digest, or records no commit (or no run)
/// beside files that do, is refused with the files named.
#[test]
fn results_of_another_manifest_commit_or_run_are_refused() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: a}, {name: b}]\nchecks:\n  - { id: unit, run: 'true' }\n",
    );
    assert_eq!(project.run_env("a", "ra"), 0);
    assert_eq!(project.run_env("b", "rb"), 0);
    let (code, report, _) = merge(&project, &["ra", "rb"]);
    assert_eq!((code, report["verdict"].as_str()), (0, Some("VERIFIED")));

    // The second file's embedded manifest made weaker, its recorded digest kept.
    edit(&project, "rb/verify-matrix-b.json", |r| {
        r["manifest"]["content"]["checks"][0]["required"] = false.into();
    });
    let (code, _, stderr) = merge(&project, &["ra", "rb"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("the results embed different manifests under one digest")
            && stderr.contains("rb/verify-matrix-b.json"),
        "{stderr}"
    );

    // Every file from one commit: one without a commit beside one with it.
    assert_eq!(project.run_env("b", "rb"), 0);
    edit(&project, "ra/verify-matrix-a.json", |r| {
        r["source"]["commit"] = "1".repeat(40).into();
    });
    let (code, _, stderr) = merge(&project, &["ra", "rb"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("the results come from different commits")
            && stderr.contains("(none recorded)"),
        "{stderr}"
    );

    // Every file from one workflow run.
    edit(&project, "ra/verify-matrix-a.json", |r| {
        r["source"]["commit"] = Value::Null;
        r["source"]["run_id"] = "100".into();
    });
    let (code, _, stderr) = merge(&project, &["ra", "rb"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("the results come from different workflow runs"),
        "{stderr}"
    );
}

/// A group's claim is re-derived from its items as the manifest defines them.
#[test]
fn a_group_is_judged_by_its_items() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: lin}]\nchecks:\n  - id: both\n    all-of:\n      - { item: a, run: 'true' }\n      - { item: b, run: 'exit 1' }\n",
    );
    assert_eq!(project.run_env("lin", "r"), 1);
    edit(&project, "r/verify-matrix-lin.json", |r| {
        let both = check(r, "both");
        both["status"] = "PASS".into();
        both["exit_code"] = 0.into();
    });
    let (code, report, _) = merge(&project, &["r"]);
    assert_eq!(code, 1);
    let why = report["contradictions"][0]["reason"].as_str().unwrap();
    assert!(
        why.contains("it claims PASS, but its item `b` did not pass"),
        "{why}"
    );
}

/// A result's machine facts must be facts of one machine: a Linux run's result
/// relabelled Windows (its machine id removed, so no clash gives it away) still says
/// Linux in its OS name, kernel and C library.
#[test]
fn machine_facts_that_contradict_each_other_are_not_taken() {
    let project = Project::new(
        "version: 1\nenvironments:\n  - { name: lin }\n  - { name: win, runs-on: windows-latest }\nchecks:\n  - { id: unit, run: 'true' }\n",
    );
    assert_eq!(project.run_env("lin", "lin"), 0);
    let mut forged = project.json("lin/verify-matrix-lin.json");
    forged["environment"] = "win".into();
    forged["checks"][0]["environment"] = "win".into();
    forged["runner"]["os"] = "windows".into();
    forged["runner"].as_object_mut().unwrap().remove("machine");
    assert!(forged["runner"]["kernel"].is_string(), "{forged}");
    project.write("win/verify-matrix-win.json", &forged.to_string());
    let (code, report, _) = merge(&project, &["lin", "win"]);
    assert_eq!(code, 3);
    let win = report["places"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["environment"] == "win")
        .unwrap();
    let why = win["mismatch"].as_str().unwrap();
    assert!(
        why.starts_with("its machine facts contradict each other: os windows with")
            && why.contains("a kernel release"),
        "{why}"
    );
}

/// An environment known only by its `detect` rules on variables and files: its result
/// records how each rule held where it ran, and a result that does not show them
/// holding (another environment's, renamed) is not taken.
#[test]
fn a_detect_only_environment_takes_only_a_result_its_rules_held_for() {
    let project = Project::new(
        "version: 1\nenvironments:\n  - { name: lin }\n  - { name: special, detect: { env: { CI_FLAVOUR: special }, file: /etc/hostname } }\nchecks:\n  - { id: unit, run: 'true' }\n",
    );
    assert_eq!(project.run_env("lin", "lin"), 0);
    let honest = project
        .std_cmd()
        .args(["run", "--env", "special", "--out", "special"])
        .env("CI_FLAVOUR", "special")
        .output()
        .unwrap();
    assert_eq!(honest.status.code(), Some(0), "{honest:?}");
    let recorded = project.json("special/verify-matrix-special.json")["runner"]["detected"].clone();
    assert_eq!(
        recorded,
        serde_json::json!({"env CI_FLAVOUR": true, "file /etc/hostname": true}),
        "the rules by name, never a variable's value"
    );
    let (code, report, _) = merge(&project, &["lin", "special"]);
    assert_eq!((code, report["verdict"].as_str()), (0, Some("VERIFIED")));

    // lin's result renamed to special.
    let mut forged = project.json("lin/verify-matrix-lin.json");
    forged["environment"] = "special".into();
    forged["checks"][0]["environment"] = "special".into();
    std::fs::remove_dir_all(project.path().join("special")).unwrap();
    project.write("special/verify-matrix-special.json", &forged.to_string());
    let (code, report, _) = merge(&project, &["lin", "special"]);
    assert_eq!(code, 3);
    let special = report["places"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["environment"] == "special")
        .unwrap();
    let why = special["mismatch"].as_str().unwrap();
    assert!(
        why.contains("its `detect` rules are not shown to hold where it ran: `env CI_FLAVOUR` is not recorded, `file /etc/hostname` is not recorded"),
        "{why}"
    );
}

/// Shards that ran the same tests prove less than their count: the pair fails, unless
/// the manifest says the split may overlap (and then `min-tests` counts each test once).
#[test]
fn shards_that_ran_the_same_tests_fail_unless_overlap_is_allowed() {
    let manifest = |extra: &str| {
        format!(
            "version: 1
environments:
  - name: lin
    shards: 2
checks:
  - id: unit
    test: 'printf %s \"<testsuite name=\\\"t\\\" tests=\\\"2\\\"><testcase classname=\\\"t\\\" name=\\\"a\\\"/><testcase classname=\\\"t\\\" name=\\\"b\\\"/></testsuite>\" > junit.xml'
    split: runner
    reports: junit.xml
{extra}"
        )
    };
    let project = Project::new(&manifest(""));
    run_shards(&project, 2, |_| 0);
    let (code, report, _) = merge(&project, &["s1", "s2"]);
    assert_eq!(code, 1);
    assert!(
        reasons(&report).contains(
            "the gate was ineffective (the split overlapped: 2 tests ran in more than one shard"
        ),
        "{}",
        reasons(&report)
    );

    let project = Project::new(&manifest(
        "    shards-may-overlap: true\n    min-tests: 3\n",
    ));
    run_shards(&project, 2, |_| 0);
    let (code, report, _) = merge(&project, &["s1", "s2"]);
    assert_eq!(code, 1, "four test runs are two tests");
    assert!(
        reasons(&report).contains("ran 2 distinct tests together, fewer than min-tests 3"),
        "{}",
        reasons(&report)
    );
    let project = Project::new(&manifest("    shards-may-overlap: true\n"));
    run_shards(&project, 2, |_| 0);
    let (code, report, _) = merge(&project, &["s1", "s2"]);
    assert_eq!((code, report["verdict"].as_str()), (0, Some("VERIFIED")));
}

/// Runs `cmd`, which must end within `secs` seconds (a command that waits on a FIFO
/// would not): its output.
fn within(mut cmd: std::process::Command, secs: u64) -> std::process::Output {
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(secs) {
            let _ = child.kill();
            panic!("still running after {secs} s: {cmd:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// What a manifest names is read confined to the repository, regular files only, with
/// a bound: a Compose file that is a FIFO, a link to `/dev/zero` or to a file outside
/// is refused at once with its place, by every command that loads the manifest.
#[cfg(unix)]
#[test]
fn a_file_the_manifest_names_that_is_no_plain_file_of_the_repository_is_refused() {
    let manifest = "version: 1\nenvironments:\n  - name: dev\n    enter: { compose: { service: dev } }\nchecks:\n  - { id: x, run: 'true' }\n";
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("compose.yaml"),
        "services:\n  dev: {}\n",
    )
    .unwrap();
    type Make<'a> = Box<dyn Fn(&std::path::Path) + 'a>;
    let cases: [(&str, Make<'_>, &str); 3] = [
        (
            "a FIFO",
            Box::new(|at| {
                let made = std::process::Command::new("mkfifo")
                    .arg(at)
                    .status()
                    .unwrap();
                assert!(made.success());
            }),
            "`compose.yaml` cannot be read: not a regular file",
        ),
        (
            "a link to /dev/zero",
            Box::new(|at| std::os::unix::fs::symlink("/dev/zero", at).unwrap()),
            "`compose.yaml` leads outside the repository (to `/dev/zero`)",
        ),
        (
            "a link out of the repository",
            Box::new(|at| {
                std::os::unix::fs::symlink(outside.path().join("compose.yaml"), at).unwrap()
            }),
            "`compose.yaml` leads outside the repository",
        ),
    ];
    for (what, make, said) in cases {
        let project = Project::new(manifest);
        make(&project.path().join("compose.yaml"));
        for command in ["plan", "run"] {
            let mut cmd = project.std_cmd();
            cmd.arg(command);
            let out = within(cmd, 30);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(4), "{what}, {command}: {stderr}");
            assert!(stderr.contains(said), "{what}, {command}: {stderr}");
            assert!(
                stderr.contains("(environments[0].enter.compose"),
                "{what}, {command}: {stderr}"
            );
        }
    }
}

/// An ssh path is judged by its normal form: one that is the remote's root or one of
/// its system folders, however it is spelled, is a manifest error.
#[test]
fn an_ssh_path_that_normalises_to_a_system_folder_is_refused() {
    let project = Project::empty();
    for path in [
        "/..",
        "/./",
        "/srv/../..",
        "//",
        "/srv/work/../../etc",
        "/home/",
        "/tmp/.",
    ] {
        let manifest = format!(
            "version: 1\nenvironments:\n  - name: box\n    enter: {{ ssh: {{ host: box, path: '{path}' }} }}\nchecks:\n  - {{ id: x, run: 'true' }}\n"
        );
        project.write("verify-matrix.yml", &manifest);
        let out = project.std_cmd().arg("plan").output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{path}: {stderr}");
        assert!(
            stderr.contains("cannot hold the repository"),
            "{path}: {stderr}"
        );
        assert!(
            stderr.contains("(environments[0].enter.ssh.path)"),
            "{path}: {stderr}"
        );
    }
    // A folder of its own, spelled with dots, is its normal form.
    project.write(
        "verify-matrix.yml",
        "version: 1\nenvironments:\n  - name: box\n    enter: { ssh: { host: box, path: '/srv/./work/../work/' } }\nchecks:\n  - { id: x, run: 'true' }\n",
    );
    let out = project.std_cmd().arg("plan").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

/// `run-timeout` bounds the whole run, the ways in included: a way in that never
/// returns is stopped, and its environment is blocked with the reason.
#[test]
fn the_run_timeout_bounds_a_way_in_that_never_returns() {
    let project = Project::new(
        "version: 1\nrun-timeout: 2s\ndefaults: { grace: 1s }\nenvironments:\n  - name: host\n  - name: stuck\n    enter: { command: [sh, -c, 'sleep 61.5 # {repo}'] }\nchecks:\n  - { id: x, run: 'true' }\n",
    );
    let mut cmd = project.std_cmd();
    cmd.args(["run", "--env", "host", "--env", "stuck"]);
    let out = within(cmd, 60);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(3), "{said}");
    assert!(
        said.contains(
            "stuck: could not be entered: its way in did not end within the run timeout (2s)"
        ),
        "{said}"
    );
    assert!(
        common::wait_until_gone("sleep 61.5"),
        "the way in outlived the run"
    );
}

/// An entered environment's result must be of the manifest this run runs: a way in
/// that runs the tool with another (weaker) manifest leaves a result that is not taken.
#[cfg(unix)]
#[test]
fn an_entered_result_of_another_manifest_is_not_taken() {
    let project = Project::new(
        "version: 1\nenvironments:\n  - name: host\n  - name: inside\n    enter: { command: [sh, '{repo}/in.sh'] }\nchecks:\n  - { id: x, run: 'exit 1' }\n",
    );
    project.write(
        "weak.yml",
        "version: 1\nenvironments:\n  - name: host\n  - name: inside\nchecks:\n  - { id: x, run: 'exit 1', exit-code: 1 }\n",
    );
    // The way in: the tool, with `--manifest weak.yml` in place of the one given.
    project.write(
        "in.sh",
        r#"dir=$(dirname "$0"); prog=$1; shift; n=$#; next=
for a in "$@"; do
  if [ -n "$next" ]; then set -- "$@" "$dir/weak.yml"; next=; else set -- "$@" "$a"; fi
  [ "$a" = --manifest ] && next=1
done
shift "$n"
exec "$prog" "$@"
"#,
    );
    let out = project
        .std_cmd()
        .args(["run", "--env", "inside"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    assert!(
        stdout.contains("inside: could not be entered: its result was made from another manifest"),
        "{stdout}"
    );
}

/// What a timing split writes with the results — the share given to the check, what
/// the listing said when it failed — is masked as the check's output is.
#[test]
fn a_splits_files_and_its_listings_words_are_masked() {
    let project = Project::new(
        "version: 1
environments: [{name: lin, shards: 2}]
checks:
  - id: py
    run: 'cat {tests_file} > /dev/null'
    split: timing
    list: 'printf \"test_$MY_TOKEN\\nother\\n\"'
    reports: r.xml
  - id: broken
    run: 'true'
    split: timing
    list: 'echo \"cannot list: $MY_TOKEN\" >&2; exit 4'
    reports: r.xml
",
    );
    let secret = "s3cr3t-t0ken-value";
    let out = project
        .std_cmd()
        .args(["run", "--shard", "1/2", "--out", "out"])
        .env("MY_TOKEN", secret)
        .output()
        .unwrap();
    assert!(out.status.code().is_some(), "{out:?}");
    let mut seen = 0;
    for entry in walkdir::WalkDir::new(project.path().join("out")) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            seen += 1;
            let text = String::from_utf8_lossy(&std::fs::read(entry.path()).unwrap()).into_owned();
            assert!(!text.contains(secret), "{}: {text}", entry.path().display());
        }
    }
    assert!(seen >= 3, "the results, a log and a share");
    let log = project.read("out/logs/lin@1of2/broken.log");
    assert!(log.contains("cannot list: ***"), "{log}");
}

/// Effectiveness is a fact too: a test gate's `min-tests` against the tests it shows it
/// ran, and a shard's empty share only where it is shown empty.
#[test]
fn min_tests_and_an_empty_share_are_judged_from_the_counts() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: lin}]\nchecks:\n  - id: unit\n    test: 'echo \"test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\"'\n    min-tests: 5\n",
    );
    assert_eq!(project.run_env("lin", "r"), 1);
    edit(&project, "r/verify-matrix-lin.json", |r| {
        let unit = check(r, "unit");
        unit["status"] = "PASS".into();
        unit["gate_effective"] = true.into();
        unit["ineffective_reason"] = Value::Null;
    });
    let (code, report, _) = merge(&project, &["r"]);
    assert_eq!(code, 1);
    let why = report["contradictions"][0]["reason"].as_str().unwrap();
    assert!(
        why.contains("it ran 3 tests, fewer than min-tests 5"),
        "{why}"
    );

    // Shard 2 prints no summary at all; its result claims an empty share.
    let project = Project::new(
        "version: 1\nenvironments: [{name: lin, shards: 2}]\nchecks:\n  - id: unit\n    test: 'if [ {shard} = 1 ]; then echo \"test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\"; fi'\n",
    );
    run_shards(&project, 2, |k| i32::from(k == 2));
    edit(&project, "s2/verify-matrix-lin@2of2.json", |r| {
        let unit = check(r, "unit");
        unit["status"] = "PASS".into();
        unit["tests_executed"] = 0.into();
    });
    let (code, report, _) = merge(&project, &["s1", "s2"]);
    assert_eq!(code, 1);
    let why = report["contradictions"][0]["reason"].as_str().unwrap();
    assert!(
        why.contains("shard 2/2: it claims PASS, but the gate was not shown effective"),
        "{why}"
    );
}

/// A group's result that records none of its items shows nothing passed.
#[test]
fn a_group_that_records_no_item_did_not_pass() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: lin}]\nchecks:\n  - id: both\n    all-of:\n      - { item: a, run: 'true' }\n      - { item: b, run: 'exit 1' }\n",
    );
    assert_eq!(project.run_env("lin", "r"), 1);
    edit(&project, "r/verify-matrix-lin.json", |r| {
        let both = check(r, "both");
        both["status"] = "PASS".into();
        both["exit_code"] = 0.into();
        both.as_object_mut().unwrap().remove("items");
    });
    let (code, report, _) = merge(&project, &["r"]);
    assert_eq!(code, 1);
    let why = report["contradictions"][0]["reason"].as_str().unwrap();
    assert!(why.contains("it records none of its items"), "{why}");
}

/// A timing split's shards must each say how they split the tests: with those facts
/// removed, they cannot be shown to have covered the listing.
#[test]
fn a_timing_splits_shards_that_hide_their_split_fail() {
    let project = Project::new(
        "version: 1
environments: [{name: lin, shards: 2}]
checks:
  - id: py
    run: 'for t in $(cat {tests_file}); do echo \"<testcase classname=\\\"s\\\" name=\\\"$t\\\"/>\"; done > cases.txt; { echo \"<testsuite>\"; cat cases.txt; echo \"</testsuite>\"; } > r.xml'
    split: timing
    list: 'printf \"a\\nb\\nc\\nd\\n\"'
    reports: r.xml
",
    );
    run_shards(&project, 2, |_| 0);
    let (code, _, stderr) = merge(&project, &["s1", "s2"]);
    assert_eq!(code, 0, "{stderr}");
    for k in 1..=2 {
        edit(
            &project,
            &format!("s{k}/verify-matrix-lin@{k}of2.json"),
            |r| {
                check(r, "py")["sharded"]
                    .as_object_mut()
                    .unwrap()
                    .remove("split");
            },
        );
    }
    let (code, report, _) = merge(&project, &["s1", "s2"]);
    assert_eq!(code, 1);
    assert!(
        reasons(&report).contains("the shards do not say how they split the tests"),
        "{}",
        reasons(&report)
    );
}

/// A report read from a file (`render`, `publish`) must not contradict itself: an edited
/// verdict or row is refused (exit 4), never rendered.
#[test]
fn a_report_that_contradicts_itself_is_refused() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: lin}]\nchecks:\n  - { id: unit, run: 'exit 1' }\n",
    );
    assert_eq!(project.run_env("lin", "r"), 1);
    let (code, _, _) = merge(&project, &["r"]);
    assert_eq!(code, 1);
    let edits: [Edit; 2] = [
        (
            "the verdict",
            |r| {
                r["verdict"] = "VERIFIED".into();
                r["reasons"] = serde_json::json!([]);
            },
            "it says VERIFIED, but unit in lin failed",
        ),
        (
            "a row",
            |r| r["rows"][0]["result"] = "PASS".into(),
            "unit in lin is PASS, and its detail says FAIL",
        ),
    ];
    for (what, change, said) in edits {
        let mut report = project.json("report.json");
        change(&mut report);
        project.write("edited.json", &report.to_string());
        let out = project
            .std_cmd()
            .args(["render", "--format", "markdown", "edited.json"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{what}: {stderr}");
        assert!(
            stderr.contains("contradicts itself") && stderr.contains(said),
            "{what}: {stderr}"
        );
    }
}

/// Results produced from a pull request's manifest, judged by the trusted one: a check
/// the pull request's manifest runs otherwise (its command changed) is no evidence.
#[test]
fn a_check_run_otherwise_than_the_trusted_manifest_says_is_no_evidence() {
    let trusted = "version: 1\nenvironments: [{name: lin}]\nchecks:\n  - { id: unit, run: 'exit 1' }\n  - { id: lint, run: 'true' }\n";
    let project = Project::new(&trusted.replace("run: 'exit 1'", "run: 'true'"));
    project.write("base.yml", trusted);
    assert_eq!(project.run_env("lin", "r"), 0);
    let out = project
        .std_cmd()
        .args([
            "--manifest",
            "base.yml",
            "merge",
            "--out",
            "report.json",
            "r",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let report = project.json("report.json");
    let why = report["contradictions"][0]["reason"].as_str().unwrap();
    assert_eq!(report["contradictions"][0]["check"], "unit");
    assert!(
        why.contains("runs otherwise than the manifest it is judged by"),
        "{why}"
    );
    // What the trusted manifest runs the same way stands.
    let lint = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "lint")
        .unwrap();
    assert_eq!(lint["result"], "PASS");
}

/// A shard that claims more tests than a number can hold is a claim like any other:
/// the merge adds them without overflowing, and judges.
#[test]
fn counts_past_any_real_suite_do_not_break_the_merge() {
    let project = Project::new(
        "version: 1\nenvironments: [{name: lin, shards: 2}]\nchecks:\n  - id: unit\n    test: 'echo \"test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\" # {shard}'\n",
    );
    run_shards(&project, 2, |_| 0);
    for k in 1..=2 {
        edit(
            &project,
            &format!("s{k}/verify-matrix-lin@{k}of2.json"),
            |r| {
                let unit = check(r, "unit");
                unit["tests_executed"] = u64::MAX.into();
                unit["test_counts"]["passed"] = u64::MAX.into();
            },
        );
    }
    let (code, report, stderr) = merge(&project, &["s1", "s2"]);
    assert!(matches!(code, 0 | 1), "{code}: {stderr}");
    assert!(report["verdict"].is_string(), "{stderr}");
}

/// A nextest-style report with one test that failed, then passed on its retry.
const FLAKY_JUNIT: &str = r#"<testsuites><testsuite name="unit" tests="2" failures="0"><testcase classname="unit" name="steady"/><testcase classname="unit" name="wobbly"><flakyFailure message="first try failed"/></testcase></testsuite></testsuites>"#;

/// `fail-on-flaky`: a test that passed only on its retry fails the pair when the
/// manifest (or `run --fail-on-flaky`) says so, and only then; a result that claims
/// PASS over its flaky test, or over a failed test its report lists, contradicts its
/// facts at the intake.
#[test]
fn a_flaky_pass_fails_under_fail_on_flaky_and_a_claimed_pass_over_it_is_refused() {
    let manifest = |strict: &str| {
        format!(
            "version: 1\nenvironments:\n  - name: lin\nchecks:\n  - id: unit\n    test: cp flaky.xml out.xml\n    reports: out.xml\n{strict}"
        )
    };
    let project = Project::new(&manifest(""));
    project.write("flaky.xml", FLAKY_JUNIT);
    project.std_cmd().arg("run").status().unwrap();
    let lenient = common::check_result(&project, "lin", "unit");
    assert_eq!(lenient["status"], "PASS", "{lenient}");
    assert_eq!(lenient["test_counts"]["flaky"], 1);
    // The flag, on the same manifest.
    let out = project
        .std_cmd()
        .args(["run", "--fail-on-flaky"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let flagged = common::check_result(&project, "lin", "unit");
    assert_eq!(flagged["status"], "FAIL");
    assert_eq!(
        flagged["summary"],
        "1 flaky test passed only on a retry, and fail-on-flaky is set"
    );
    // The flag reaches a group's items too.
    project.write(
        "verify-matrix.yml",
        "version: 1\nenvironments:\n  - name: lin\nchecks:\n  - id: group\n    all-of:\n      - { item: unit, test: cp flaky.xml out.xml, reports: out.xml }\n",
    );
    let out = project.std_cmd().arg("run").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = project
        .std_cmd()
        .args(["run", "--fail-on-flaky"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    // The manifest's key.
    project.write("verify-matrix.yml", &manifest("    fail-on-flaky: true\n"));
    let out = project.std_cmd().arg("run").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        common::check_result(&project, "lin", "unit")["status"],
        "FAIL"
    );
    // A result edited to PASS over its flaky test is caught at the intake.
    edit(
        &project,
        "verify-matrix-results/verify-matrix-lin.json",
        |r| {
            let c = check(r, "unit");
            c["status"] = "PASS".into();
            c["summary"] = "2 tests passed".into();
        },
    );
    let (code, report, stderr) = merge(&project, &["verify-matrix-results"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(report["verdict"], "NOT_VERIFIED");
    let reason = report["contradictions"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains(
            "it claims PASS, but 1 of its tests passed only on a retry, and fail-on-flaky is set"
        ),
        "{reason}"
    );
    // And one edited to PASS over a failed test its report lists.
    project.write("verify-matrix.yml", &manifest(""));
    project.write(
        "flaky.xml",
        &FLAKY_JUNIT
            .replace(
                r#"<flakyFailure message="first try failed"/>"#,
                r#"<failure message="broke"/>"#,
            )
            .replace(r#"failures="0""#, r#"failures="1""#),
    );
    project.std_cmd().arg("run").status().unwrap();
    edit(
        &project,
        "verify-matrix-results/verify-matrix-lin.json",
        |r| {
            let c = check(r, "unit");
            c["status"] = "PASS".into();
            c["exit_code"] = 0.into();
        },
    );
    let (code, report, stderr) = merge(&project, &["verify-matrix-results"]);
    assert_eq!(code, 1, "{stderr}");
    let reason = report["contradictions"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("it claims PASS, but its report lists 1 failed test"),
        "{reason}"
    );
}

/// A project whose one check failed, run into `artifacts/linux`, and the check's log
/// (which holds "the tail").
#[cfg(unix)]
fn one_failed_check() -> (Project, std::path::PathBuf) {
    let project = Project::new(
        "version: 1\nenvironments:\n  - name: linux\nchecks:\n  - { id: unit, run: 'echo the tail; exit 1' }\n",
    );
    let mut run = project.std_cmd();
    run.args(["run", "--out", "artifacts/linux"]);
    assert_eq!(within(run, 60).status.code(), Some(1));
    let log = project.path().join("artifacts/linux/logs/linux/unit.log");
    assert!(std::fs::read_to_string(&log).unwrap().contains("the tail"));
    (project, log)
}

/// A log an artifact holds that is a FIFO is never waited on: the markdown a merge or a
/// render prints (which quotes a failed check's log tail) is made without it, at once.
#[cfg(unix)]
#[test]
fn a_failed_checks_log_that_is_a_fifo_is_not_waited_on() {
    let (project, log) = one_failed_check();
    std::fs::remove_file(&log).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&log)
        .status()
        .unwrap();
    assert!(made.success());
    // The merge judges (one check failed: exit 1); the render of its report prints.
    let merge = [
        "merge",
        "--format",
        "markdown",
        "--out",
        "report.json",
        "artifacts",
    ];
    let render = ["render", "--format", "markdown", "report.json"];
    for (args, code) in [(&merge[..], 1), (&render[..], 0)] {
        let mut cmd = project.std_cmd();
        cmd.args(args);
        let out = within(cmd, 30);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stdout}");
        assert!(
            stdout.contains("unit") && !stdout.contains("the tail"),
            "{args:?}: {stdout}"
        );
    }
}

/// A failed check's log replaced, after the merge, by a link leading out of the
/// report's folder (to a key, say): the render of the report quotes the log's tail when
/// it is the log, and never what a link leading out reaches.
#[cfg(unix)]
#[test]
fn a_log_that_became_a_link_leading_out_is_never_quoted() {
    let (project, log) = one_failed_check();
    let mut merge = project.std_cmd();
    merge.args(["merge", "--out", "report.json", "artifacts"]);
    assert_eq!(within(merge, 60).status.code(), Some(1));
    let render = || {
        let mut cmd = project.std_cmd();
        cmd.args(["render", "--format", "markdown", "report.json"]);
        let out = within(cmd, 30);
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(render().contains("the tail"), "the log itself is quoted");
    let elsewhere = tempfile::tempdir().unwrap();
    let key = elsewhere.path().join("id_ed25519");
    std::fs::write(&key, "a key from outside\n").unwrap();
    std::fs::remove_file(&log).unwrap();
    std::os::unix::fs::symlink(&key, &log).unwrap();
    let shown = render();
    assert!(
        shown.contains("unit") && !shown.contains("a key from outside"),
        "{shown}"
    );
}
