//! Valid manifests into the typed model: every kind and key of docs/formats.md §1, and every
//! manifest that ships with the repository.

mod common;

use std::path::Path;
use std::time::Duration;

use cargo_verify_matrix::manifest::{
    CheckKind, EnvName, EnvScope, ExpectExit, Gate, ReportFormat, ReportPattern, Shell, TestSpec,
    load_yaml_file,
};
use common::repo_root;

#[test]
fn the_complete_example_parses_into_every_kind() {
    let m = load_yaml_file(&repo_root().join("fixtures/manifests/valid/complete.yml")).unwrap();
    let kinds: Vec<&str> = m.checks.iter().map(|c| c.kind.key()).collect();
    assert_eq!(
        kinds,
        [
            "run",
            "run",
            "test",
            "file",
            "not-file",
            "git-clean",
            "any-of",
            "assert",
            "quality",
            "test"
        ]
    );
    // Report patterns: told from the content, or in the format named.
    let dotnet = &m.checks[9];
    assert_eq!(
        dotnet.reports,
        [
            ReportPattern::any("out/*.trx"),
            ReportPattern {
                path: "out/console.tap".to_owned(),
                format: Some(ReportFormat::Tap)
            }
        ]
    );
    let unit = &m.checks[0];
    assert_eq!(unit.scope, EnvScope::All);
    assert_eq!(unit.expect, ExpectExit::Code(0));
    assert_eq!(unit.gate, Gate::Test);
    assert!(unit.must_be_effective);
    assert_eq!(unit.timeout, Duration::from_secs(20 * 60));
    assert_eq!(unit.grace, Duration::from_secs(10));
    assert_eq!(unit.retries, 1);
    assert_eq!(unit.cwd, "crates/core");
    assert_eq!(unit.env["RUST_BACKTRACE"], "1");
    assert_eq!(m.checks[1].expect, ExpectExit::Failure);
    assert!(matches!(m.checks[2].kind, CheckKind::Test(TestSpec::Auto)));
    assert!(
        m.checks[2].must_be_effective,
        "test checks must be effective by default"
    );
    assert!(matches!(&m.checks[3].kind, CheckKind::File { search, .. } if search == &[".", "src"]));
    match &m.checks[6].kind {
        CheckKind::AnyOf(items) => {
            let names: Vec<&str> = items.iter().map(|i| i.id.as_str()).collect();
            assert_eq!(names, ["readme", "docs"]);
        }
        other => panic!("expected any-of, got {other:?}"),
    }
    assert!(m.checks[7].kind.is_manual() && m.checks[8].kind.is_manual());
    assert_eq!(m.run_timeout, Some(Duration::from_secs(2 * 3600)));
    assert_eq!(m.policy.deny.len(), 2);
    let linux = m.environment("linux").unwrap();
    assert_eq!(linux.shell, Some(Shell::Bash));
    assert_eq!(linux.detect.as_ref().unwrap().env["CI"], "true");
    assert_eq!(m.shell_for(&m.checks[0], linux), Shell::Bash);
    assert_eq!(m.checks_for(&EnvName("windows".into())).count(), 10);
    assert_eq!(m.checks[0].line, Some(35), "the line of `- id: unit_tests`");
}

#[test]
fn every_manifest_in_the_repository_is_valid() {
    for path in [
        "verify-matrix.yml",
        "fixtures/demo/verify-matrix.yml",
        "fixtures/manifests/valid/complete.yml",
    ] {
        load_yaml_file(&repo_root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
}

#[test]
fn a_manifest_with_no_checks_is_valid() {
    let m = cargo_verify_matrix::manifest::from_yaml_text(
        Path::new("m.yml"),
        "version: 1\nenvironments: [{name: a}]\n",
    )
    .unwrap();
    assert!(m.checks.is_empty());
}
