//! Secrets never leave the runner: what a check prints passes through the redacting
//! writer before its log is written, and every result, render and publication is
//! redacted the same way. Each test scans every file the run wrote (what the Action
//! uploads as the leg's artifact) for the secret values, and checks the rest of the
//! line is still there.

mod common;

use std::path::Path;

use common::{Project, manifest_with};

const NPM: &str = "npm-s3cr3t-token-1234";
const AWS: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const DB: &str = "correct-horse-battery";
const GHP: &str = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
const MASKED: &str = "s3cr3t-v4lue-xyz";

/// Every file under `dir`, as text (lossy): (path, text). A result file's copy of the
/// manifest (`manifest.content`) is left out: it is the repository's own file, which
/// everyone who can read the artifact can read, embedded as it is so that its digest
/// holds.
fn files_under(dir: &Path) -> Vec<(String, String)> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let bytes = std::fs::read(e.path()).unwrap();
            let text = match serde_json::from_slice::<serde_json::Value>(&bytes) {
                Ok(mut json) if json.pointer("/manifest/content").is_some() => {
                    json["manifest"]["content"] = serde_json::Value::Null;
                    json.to_string()
                }
                _ => String::from_utf8_lossy(&bytes).into_owned(),
            };
            (e.path().display().to_string(), text)
        })
        .collect()
}

/// No file under `dir`, nor any of `texts`, holds one of `secrets`.
fn holds_none(dir: &Path, texts: &[(&str, &str)], secrets: &[&str]) {
    let mut all: Vec<(String, String)> = files_under(dir);
    all.extend(texts.iter().map(|(n, t)| (n.to_string(), t.to_string())));
    assert!(!all.is_empty());
    for (name, text) in &all {
        for secret in secrets {
            assert!(!text.contains(secret), "{name} holds `{secret}`:\n{text}");
        }
    }
}

/// `run --out results` in `project`, with `NPM_TOKEN` (a secret by its name) set.
fn run_with_npm_token(project: &Project) -> std::process::Output {
    project
        .std_cmd()
        .args(["run", "--out", "results"])
        .env("NPM_TOKEN", NPM)
        .output()
        .unwrap()
}

#[test]
fn the_issues_leaky_checks_leave_nothing_in_the_results_folder() {
    let project = Project::new(&manifest_with(concat!(
        "  - { id: leaky, run: \"echo npm=$NPM_TOKEN aws=$AWS_SECRET_ACCESS_KEY db=$DATABASE_PASSWORD; echo ghp_0123456789abcdefghijklmnopqrstuvwxyzAB; exit 1\" }\n",
        "  - { id: masked, run: \"echo '::add-mask::s3cr3t-v4lue-xyz'; echo later s3cr3t-v4lue-xyz\" }\n",
        "  - { id: after, run: \"echo still s3cr3t-v4lue-xyz >&2\" }\n",
    )));
    let out = project
        .std_cmd()
        .args(["run", "--out", "results"])
        .env("NPM_TOKEN", NPM)
        .env("AWS_SECRET_ACCESS_KEY", AWS)
        .env("DATABASE_PASSWORD", DB)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    holds_none(
        &project.path().join("results"),
        &[("stdout", &stdout), ("stderr", &stderr)],
        &[NPM, AWS, DB, GHP, MASKED],
    );
    assert_eq!(
        project.read("results/logs/local/leaky.log"),
        "npm=*** aws=*** db=***\n***\n"
    );
    assert_eq!(
        project.read("results/logs/local/masked.log"),
        "::add-mask::***\nlater ***\n"
    );
    // Declared in one check, masked in the next one's stderr too.
    assert_eq!(project.read("results/logs/local/after.log"), "still ***\n");
    // Renders and publications of the merged report: none holds them either.
    project.merge_into("results", "report.json");
    let mut texts = Vec::new();
    for format in ["markdown", "json", "junit", "html", "table"] {
        texts.push((
            format,
            project.stdout_of(&["render", "--format", format, "report.json"]),
        ));
    }
    let plan = project
        .std_cmd()
        .args([
            "publish",
            "report.json",
            "--dry-run",
            "--repo",
            "o/r",
            "--pr",
            "12",
        ])
        .args(["--to", "comment", "--to", "check-run", "--to", "summary"])
        .output()
        .unwrap();
    texts.push((
        "publish",
        String::from_utf8_lossy(&plan.stdout).into_owned(),
    ));
    let texts: Vec<(&str, &str)> = texts.iter().map(|(n, t)| (*n, t.as_str())).collect();
    holds_none(
        &project.path().join("results"),
        &texts,
        &[NPM, AWS, DB, GHP, MASKED],
    );
}

/// The manifest's own `env:` values with secret names, `redact.env` names, the Action's
/// `mask-env`, and `redact.patterns`.
#[test]
fn manifest_env_names_and_patterns_are_masked() {
    let project = Project::new(concat!(
        "version: 1\n",
        "environments: [{ name: local, env: { DEPLOY_KEY: env-level-secret-value } }]\n",
        "defaults: { env: { SERVICE_TOKEN: defaults-secret-value } }\n",
        "redact:\n",
        "  env: [PLAIN_NAME]\n",
        "  patterns: ['session=[0-9a-f]{8}']\n",
        "checks:\n",
        "  - id: prints\n",
        "    run: 'echo $DEPLOY_KEY $SERVICE_TOKEN $PLAIN_NAME $FROM_ACTION session=deadbeef; exit 1'\n",
        "    env: { PLAIN_NAME: named-but-not-secret-looking }\n",
    ));
    let out = project
        .std_cmd()
        .args(["run", "--out", "results"])
        .env("FROM_ACTION", "given-by-mask-env")
        .env("VERIFY_MATRIX_MASK_ENV", "FROM_ACTION")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        project.read("results/logs/local/prints.log"),
        "*** *** *** *** ***\n"
    );
    holds_none(
        &project.path().join("results"),
        &[],
        &[
            "env-level-secret-value",
            "defaults-secret-value",
            "named-but-not-secret-looking",
            "given-by-mask-env",
            "deadbeef",
        ],
    );
}

/// A secret printed in two writes, a pause between them, is still caught; on stdout
/// and stderr alike.
#[test]
fn a_secret_split_across_two_writes_is_caught() {
    let project = Project::new(&manifest_with(
        "  - { id: split, run: \"printf 'tok=npm-s3cr3t-'; sleep 0.3; printf 'token-1234 end\\\\n' >&2\" }\n",
    ));
    let out = run_with_npm_token(&project);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        project.read("results/logs/local/split.log"),
        "tok=*** end\n"
    );
}

/// Lines past the 1 MiB a line is waited for, with a private key's first line and a
/// secret value across where the writer first cuts them: neither reaches a file of the
/// results or the console, and the text around them does. (Written in pieces cut at
/// 1 MiB, the key's body and the value were in the log.)
#[test]
fn secrets_across_the_cut_of_an_over_long_line_are_caught() {
    // Each printed in two writes a pause apart, the first taking the line past 1 MiB.
    let project = Project::new(&manifest_with(concat!(
        "  - { id: long, run: \"",
        "head -c 1048570 /dev/zero | tr '\\\\0' z; printf -- '-----BEGIN RSA PRI'; sleep 0.3; ",
        "printf 'VATE KEY-----'; head -c 2097152 /dev/zero | tr '\\\\0' Q; ",
        "printf '\\\\n-----END RSA PRIVATE KEY-----\\\\nafter\\\\n'; ",
        "head -c 1048570 /dev/zero | tr '\\\\0' y; printf 'npm=%s' ${NPM_TOKEN:0:9}; sleep 0.3; ",
        "printf '%s end\\\\n' ${NPM_TOKEN:9}",
        "\" }\n",
    )));
    let out = run_with_npm_token(&project);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let console = String::from_utf8_lossy(&out.stdout);
    holds_none(
        &project.path().join("results"),
        &[("stdout", &console)],
        &[NPM, "QQQQQQQQ"],
    );
    let log = project.read("results/logs/local/long.log");
    assert!(log.starts_with(&"z".repeat(1_048_570)), "{}", &log[..100]);
    assert!(log.contains("***\nafter\n"), "{}", &log[log.len() - 200..]);
    assert!(
        log.ends_with("npm=*** end\n"),
        "{}",
        &log[log.len() - 100..]
    );
}

/// A runner report's failure message holding a secret: masked in the result.
#[test]
fn a_junit_failure_message_is_masked_in_the_result() {
    let project = Project::new(&manifest_with(concat!(
        "  - id: unit\n",
        "    test: cat report.xml > junit.xml; echo '1 passed, 1 failed in 0.1s'; exit 1\n",
        "    reports: junit.xml\n",
    )));
    project.write(
        "report.xml",
        &format!(
            "<testsuite name=\"s\"><testcase classname=\"t\" name=\"a\"/><testcase classname=\"t\" name=\"b\"><failure message=\"auth with {NPM} failed\">{NPM}</failure></testcase></testsuite>"
        ),
    );
    let out = run_with_npm_token(&project);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let result = project.json("results/verify-matrix-local.json");
    let case = &result["checks"][0]["tests"]["cases"][1];
    assert_eq!(case["message"], "auth with *** failed", "{case}");
    // (The copied report is the check's own file in the tree, not in the results.)
    holds_none(&project.path().join("results"), &[], &[NPM]);
}

/// A `redact:` pattern that does not compile, matches the empty string or every line
/// is a manifest error with its position.
#[test]
fn bad_redact_patterns_are_manifest_errors() {
    let project = Project::empty();
    project.write(
        "bad.yml",
        "version: 1\nenvironments: [{ name: local }]\nredact:\n  env: ['A=B']\n  patterns: ['(unclosed', 'x*', '.']\nchecks: []\n",
    );
    project.plan_refuses(
        "bad.yml",
        &[
            "bad.yml:4:",
            "`A=B` is not a variable's name",
            "bad.yml:5:",
            "invalid regex `(unclosed`",
            "`x*` matches the empty string",
            "`.` matches every line",
        ],
    );
}
