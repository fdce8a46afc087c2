//! Test helpers: a project in a temporary folder and the real binary run inside it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// Turns a partial result's table of checks (`{"columns": [...], "rows": [[...]]}`)
/// into the list of the checks' objects, each field named beside its value: a field
/// that an object leaves out when it has none (`cause`, `items`, `tests`, `sharded`)
/// and that the row holds as `null` is left out. Anything else is left as it is.
pub fn checks_as_objects(result: &mut serde_json::Value) {
    let Some(table) = result.get("checks").and_then(|c| c.as_object()) else {
        return;
    };
    let (Some(columns), Some(rows)) = (
        table.get("columns").and_then(|c| c.as_array()),
        table.get("rows").and_then(|r| r.as_array()),
    ) else {
        return;
    };
    let objects: Vec<serde_json::Value> = rows
        .iter()
        .map(|row| {
            let mut object = serde_json::Map::new();
            for (column, value) in columns.iter().zip(row.as_array().unwrap()) {
                let column = column.as_str().unwrap();
                let optional = ["cause", "items", "tests", "sharded"].contains(&column);
                if !(optional && value.is_null()) {
                    object.insert(column.to_owned(), value.clone());
                }
            }
            serde_json::Value::Object(object)
        })
        .collect();
    result["checks"] = serde_json::Value::Array(objects);
}

/// A throwaway project folder holding a manifest and whatever files a test adds.
pub struct Project {
    pub dir: tempfile::TempDir,
}

impl Project {
    /// A project whose `verify-matrix.yml` is `manifest`.
    pub fn new(manifest: &str) -> Project {
        let project = Project::empty();
        project.write("verify-matrix.yml", manifest);
        project
    }

    /// An empty project folder.
    pub fn empty() -> Project {
        Project {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `text` to `relative` (creating folders).
    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Reads `relative` as text.
    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(relative))
            .unwrap_or_else(|e| panic!("reading {relative}: {e}"))
    }

    /// Reads `relative` as JSON.
    ///
    /// A partial result's table of checks (format 3) is read as the list of the checks'
    /// objects, as earlier formats wrote them (and as the tool reads them still), so a
    /// test reads and edits a check by its fields' names: [`Project::raw_json`] reads
    /// the file as it is.
    pub fn json(&self, relative: &str) -> serde_json::Value {
        let mut value = self.raw_json(relative);
        checks_as_objects(&mut value);
        value
    }

    /// Reads `relative` as JSON, as it is.
    pub fn raw_json(&self, relative: &str) -> serde_json::Value {
        serde_json::from_str(&self.read(relative)).expect("valid JSON")
    }

    /// The binary, run in this folder with a clean CI-free environment.
    pub fn cmd(&self) -> Command {
        Command::from_std(self.std_cmd())
    }

    /// `run --env ENV --out OUT`, as one matrix job does; its exit code (which says
    /// whether the checks passed, not whether the run worked).
    #[allow(dead_code)]
    pub fn run_env(&self, env: &str, out: &str) -> i32 {
        let status = self
            .std_cmd()
            .args(["run", "--env", env, "--out", out])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        status.code().expect("run exits with a code")
    }

    /// `plan --manifest MANIFEST`, which must refuse it (exit 4) with every one of
    /// `expected` in its errors.
    pub fn plan_refuses(&self, manifest: &str, expected: &[&str]) {
        let out = self
            .std_cmd()
            .args(["plan", "--manifest", manifest])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{stderr}");
        for expected in expected {
            assert!(stderr.contains(expected), "{expected}\n---\n{stderr}");
        }
    }

    /// Runs `manifest` (which must pass), merges its results into `report.json`, and
    /// renders that report alone in `format`, which must be refused (exit 2) as one
    /// that needs the run's result files.
    pub fn report_alone_refused_as(&self, manifest: &str, format: &str) {
        self.cmd()
            .args(["-q", "run", "--manifest", manifest])
            .assert()
            .success();
        self.cmd()
            .args([
                "-q",
                "merge",
                "--manifest",
                manifest,
                "--out",
                "report.json",
            ])
            .arg("verify-matrix-results")
            .assert()
            .success();
        let out = self
            .std_cmd()
            .args(["render", "--format", format, "report.json"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        let says = format!("--format {format} reads a run's result files");
        assert!(stderr.contains(&says), "{stderr}");
    }

    /// Runs each of `envs` into `results/<env>`, as the matrix jobs would.
    #[allow(dead_code)]
    pub fn run_envs(&self, envs: &[&str]) {
        for env in envs {
            self.run_env(env, &format!("results/{env}"));
        }
    }

    /// [`Project::run_envs`] as the legs of one workflow run of the repository `o/r` at
    /// a fixed commit, with `run`'s variables (`GITHUB_RUN_ID`, …); each leg must exit 0.
    #[allow(dead_code)]
    pub fn run_envs_in_run(&self, envs: &[&str], run: &[(&str, &str)]) {
        for env in envs {
            let out = self
                .std_cmd()
                .args(["run", "--env", env, "--out", &format!("results/{env}")])
                .env("GITHUB_REPOSITORY", "o/r")
                .env("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567")
                .envs(run.iter().copied())
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
        }
    }

    /// `ARGS…` (e.g. `render --format html results`), which must exit 0: its stdout.
    #[allow(dead_code)]
    pub fn stdout_of(&self, args: &[&str]) -> String {
        let out = self.std_cmd().args(args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// `merge --out OUT FROM`, which must write OUT (whatever the verdict).
    #[allow(dead_code)]
    pub fn merge_into(&self, from: &str, out: &str) {
        let merged = self
            .std_cmd()
            .args(["merge", "--out", out, from])
            .output()
            .unwrap();
        assert!(self.path().join(out).exists(), "{merged:?}");
    }

    /// `git ARGS` in the project, which must succeed (a fixed author; no hooks or
    /// signing from the caller's settings).
    pub fn git(&self, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.com",
                "-c",
                "commit.gpgsign=false",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Makes the project a git repository with everything in it committed.
    pub fn commit_all(&self, message: &str) {
        if !self.path().join(".git").exists() {
            self.git(&["init", "-q"]);
        }
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
    }

    /// Like [`Project::cmd`], as a plain `std::process::Command` (to spawn and watch).
    pub fn std_cmd(&self) -> std::process::Command {
        let mut cmd = std_bin();
        cmd.current_dir(self.dir.path());
        cmd
    }
}

/// Compares `actual` with the golden file `relative` (under the repository root); with
/// `UPDATE_GOLDEN=1`, writes it instead.
pub fn golden(relative: &str, actual: &str) {
    let path = repo_root().join(relative);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let expected =
        std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{} is missing", path.display()));
    assert_eq!(actual, expected, "{relative}");
}

/// The real binary with the variables that would change its behaviour removed.
pub fn bin() -> Command {
    Command::from_std(std_bin())
}

/// [`bin`] as a plain `std::process::Command`.
pub fn std_bin() -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("cargo-verify-matrix"));
    for var in [
        "GITHUB_ACTIONS",
        "GITHUB_OUTPUT",
        "GITHUB_EVENT_PATH",
        "GITHUB_STEP_SUMMARY",
        "GITHUB_REPOSITORY",
        "GITHUB_SHA",
        "GITHUB_RUN_ID",
        "GITHUB_RUN_ATTEMPT",
        "GITHUB_JOB",
        "GITHUB_EVENT_NAME",
        "GITHUB_TOKEN",
        "GITHUB_API_URL",
        "GITHUB_SERVER_URL",
        "VERIFY_MATRIX_ENV",
        // Tests run under GitLab CI must not publish there.
        "GITLAB_CI",
        "GITLAB_TOKEN",
        "CI_JOB_TOKEN",
        "CI_API_V4_URL",
        "CARGO_TERM_COLOR",
        "CLAUDE_PROJECT_DIR",
        "XDG_STATE_HOME",
        // The caller's cargo settings must not reach the temporary crates the checks
        // build: a shared target folder would mix their test binaries.
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTDOCFLAGS",
        "RUSTC_WRAPPER",
        "CARGO_BUILD_RUSTC_WRAPPER",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("NO_COLOR", "1");
    cmd
}

/// The repository's own folder (for fixtures).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A one-environment manifest with these checks (YAML list items, indented by 2).
pub fn manifest_with(checks: &str) -> String {
    format!("version: 1\nenvironments:\n  - name: local\ndefaults:\n  grace: 1s\nchecks:\n{checks}")
}

/// The fields of one check's result (docs/formats.md §4), all always present.
pub const CHECK_RESULT_FIELDS: &[&str] = &[
    "command_id",
    "environment",
    "kind",
    "command",
    "cwd",
    "required",
    "must_be_effective",
    "gate_type",
    "status",
    "exit_code",
    "required_exit_code",
    "duration_ms",
    "log_path",
    "gate_effective",
    "tests_executed",
    "test_counts",
    "ineffective_reason",
    "summary",
    "retryable",
    "attempts",
    "flaky",
    "timed_out",
    "leaked",
    "refused",
];

/// The result of check `id` in environment `env`'s result file of `project`.
pub fn check_result(project: &Project, env: &str, id: &str) -> serde_json::Value {
    let result = project.json(&format!("verify-matrix-results/verify-matrix-{env}.json"));
    result["checks"]
        .as_array()
        .expect("a checks list")
        .iter()
        .find(|c| c["command_id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no result for {id} in {env}"))
}

/// Live (non-zombie) processes whose command line contains `needle` (Linux /proc).
pub fn alive(needle: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(Result::ok)
        .filter_map(|e| {
            e.file_name().to_str()?.parse::<u32>().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let state = stat[stat.rfind(')')? + 2..].chars().next()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            (state != 'Z' && text.contains(needle)).then_some(text)
        })
        .collect()
}

/// Waits (up to 30 s) until a process whose command line contains `needle` runs, and
/// then a moment more: the tool lists a check with its watchdog (and its signal
/// handling knows it) just after the spawn returns, and on a loaded machine the check
/// can be seen running a little before that. The callers kill or signal the tool next.
pub fn wait_until_alive(needle: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while alive(needle).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "`{needle}` never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
}

/// Starts `cmd` (the tool, mid-run) with its output discarded, and waits until a
/// process whose command line contains `needle` runs ([`wait_until_alive`]).
pub fn start_until_alive(mut cmd: std::process::Command, needle: &str) -> std::process::Child {
    let child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_until_alive(needle);
    child
}

/// Sends the signal `name` (`TERM`, `INT`, …) to process `pid`, which must take it.
pub fn signal(pid: u32, name: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits (up to 30 s) until no live process's command line contains `needle`; whether
/// none is left.
pub fn wait_until_gone(needle: &str) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !alive(needle).is_empty() {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    true
}

/// The result of check `id` in the result file's JSON `result` (its checks a list of
/// objects or a table).
pub fn check_in(result: &serde_json::Value, id: &str) -> serde_json::Value {
    let mut objects = result.clone();
    checks_as_objects(&mut objects);
    objects["checks"]
        .as_array()
        .expect("a checks list")
        .iter()
        .find(|c| c["command_id"] == id)
        .unwrap_or_else(|| panic!("no result for {id} in {result}"))
        .clone()
}

/// A check result with the given outcome and plain defaults: a required custom gate
/// that took 1234 ms, logged at `logs/<env>/<id>.log`.
pub fn sample_result(
    id: &str,
    env: &str,
    status: cargo_verify_matrix::results::Status,
    exit: Option<i32>,
    summary: &str,
) -> cargo_verify_matrix::results::CheckResult {
    cargo_verify_matrix::results::CheckResult {
        command_id: id.into(),
        environment: env.into(),
        kind: "run".into(),
        command: format!("cargo {id}").into(),
        cwd: ".".into(),
        required: true,
        must_be_effective: false,
        gate_type: "custom".into(),
        status,
        exit_code: exit,
        required_exit_code: Some(0),
        duration_ms: 1234,
        log_path: Some(format!("logs/{env}/{id}.log").into()),
        gate_effective: None,
        tests_executed: None,
        test_counts: None,
        ineffective_reason: None,
        summary: summary.into(),
        cause: None,
        retryable: false,
        attempts: 1,
        flaky: false,
        timed_out: false,
        leaked: vec![],
        refused: None,
        items: Vec::new(),
        tests: None,
        sharded: None,
    }
}

/// A complete partial result of `env` for manifest `m`, run from `source`.
pub fn sample_partial(
    m: &cargo_verify_matrix::manifest::Manifest,
    env: &str,
    source: cargo_verify_matrix::results::Source,
    checks: Vec<cargo_verify_matrix::results::CheckResult>,
) -> cargo_verify_matrix::results::PartialResult {
    use cargo_verify_matrix::results::{ManifestRef, Outcome, PartialResult, Runner, Tool};
    PartialResult {
        format_version: 2,
        tool: Tool::current(),
        manifest: ManifestRef {
            path: "verify-matrix.yml".into(),
            digest: m.digest.clone(),
            content: (&m.content).into(),
        },
        environment: env.into(),
        shard: None,
        source,
        runner: Runner {
            os: "linux".into(),
            arch: "x86_64".into(),
            hostname: "h".into(),
            container: Some(false),
            ..Runner::default()
        },
        started_at: "2026-11-21T15:00:00Z".into(),
        finished_at: Some("2026-11-21T15:00:02Z".into()),
        duration_ms: 2000,
        outcome: Outcome::Complete,
        checks: checks.into_iter().map(Box::new).collect(),
        held: None,
    }
}

/// Copies the folder `from` to `to`, recursively (as an artifact upload and download
/// would move it).
pub fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A stand-in of GitHub's API on 127.0.0.1 that lists a workflow run's jobs: each of
/// `legs` (environment, runner name) as a job `run (ENV)` that succeeded on that runner,
/// in whichever attempt is asked (`GET …/attempts/N/jobs`); anything else is not found.
/// Its URL, for `GITHUB_API_URL`. It serves until the test process ends.
pub fn jobs_stand_in(legs: &[(&str, &str)]) -> String {
    use std::io::{Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let legs: Vec<(String, String)> = legs
        .iter()
        .map(|(e, r)| ((*e).to_owned(), (*r).to_owned()))
        .collect();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let head = String::from_utf8_lossy(&request);
            let path = head
                .split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .to_owned();
            let attempt = path
                .split("/attempts/")
                .nth(1)
                .and_then(|rest| rest.split('/').next())
                .and_then(|a| a.parse::<u64>().ok());
            let (status, body) = match attempt.filter(|_| path.contains("/jobs")) {
                Some(attempt) => {
                    let jobs: Vec<serde_json::Value> = legs
                        .iter()
                        .map(|(env, runner)| {
                            serde_json::json!({
                                "name": format!("run ({env})"), "status": "completed",
                                "conclusion": "success", "labels": ["ubuntu-latest"],
                                "run_attempt": attempt, "runner_name": runner,
                                "runner_group_name": "GitHub Actions",
                            })
                        })
                        .collect();
                    let body = serde_json::json!({"total_count": jobs.len(), "jobs": jobs});
                    ("200 OK", body.to_string())
                }
                None => ("404 Not Found", r#"{"message":"Not Found"}"#.to_owned()),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

/// A zip archive of `entries`, written by Python's zipfile (deflated).
pub fn zip_of(dir: &Path, entries: &[(&str, &str)]) -> Vec<u8> {
    let spec = dir.join("entries.json");
    std::fs::write(&spec, serde_json::json!(entries).to_string()).unwrap();
    let out = dir.join("artifact.zip");
    let script = "import json, sys, zipfile
entries = json.load(open(sys.argv[1]))
with zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED) as z:
    for name, text in entries:
        z.writestr(name, text)";
    let status = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(&spec)
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::read(out).unwrap()
}
