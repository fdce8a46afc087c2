//! Why a pair has no row is a state the report keeps (`kind`), not words a renderer
//! reads back: a result's own summary cannot change it, and a report of format 1 (which
//! said it only in words) is still read, with the same states.

mod common;

use std::path::Path;

use cargo_verify_matrix::manifest::from_yaml_text;
use cargo_verify_matrix::results::{MissingKind, Report, Source, Status};
use common::{Project, sample_partial, sample_result};

const MANIFEST: &str = "version: 1\nenvironments: [{ name: linux }, { name: macos }]\nchecks:\n  - { id: unit, run: cargo test }\n  - { id: lint, run: cargo clippy }\n  - { id: docs, run: cargo doc }\n";

/// unit NOT_RUN in linux with a summary that reads like the other states; lint errored
/// before an exit code; docs passed; macos reported nothing.
fn report() -> Report {
    let m = from_yaml_text(Path::new("verify-matrix.yml"), MANIFEST).unwrap();
    let checks = vec![
        sample_result(
            "unit",
            "linux",
            Status::NotRun,
            None,
            "failed to run: no results",
        ),
        sample_result(
            "lint",
            "linux",
            Status::Error,
            None,
            "could not start `cargo`",
        ),
        sample_result("docs", "linux", Status::Pass, Some(0), "passed"),
    ];
    Report::build(
        &m,
        &[sample_partial(&m, "linux", Source::default(), checks)],
    )
}

fn kinds(report: &Report) -> Vec<(String, String, MissingKind)> {
    report
        .missing
        .iter()
        .map(|m| {
            (
                m.check.clone(),
                m.environment.clone(),
                report.missing_kind(m),
            )
        })
        .collect()
}

#[test]
fn each_missing_pair_keeps_its_kind_whatever_its_summary_says() {
    let report = report();
    let expected = vec![
        ("unit".to_owned(), "linux".to_owned(), MissingKind::NotRun),
        ("unit".to_owned(), "macos".to_owned(), MissingKind::NoResult),
        (
            "lint".to_owned(),
            "linux".to_owned(),
            MissingKind::FailedToRun,
        ),
        ("lint".to_owned(), "macos".to_owned(), MissingKind::NoResult),
        ("docs".to_owned(), "macos".to_owned(), MissingKind::NoResult),
    ];
    assert_eq!(kinds(&report), expected);
    assert!(report.failed_to_run);
    assert!(report.has_failures());
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["format_version"], 2);
    assert_eq!(json["failed_to_run"], true);
    assert_eq!(json["missing"][0]["kind"], "not_run");
    assert_eq!(json["missing"][2]["kind"], "failed_to_run");
}

#[test]
fn a_report_of_format_1_is_read_with_the_same_states() {
    let report = report();
    let mut v1 = serde_json::to_value(&report).unwrap();
    v1["format_version"] = 1.into();
    v1.as_object_mut().unwrap().remove("failed_to_run");
    for missing in v1["missing"].as_array_mut().unwrap() {
        missing.as_object_mut().unwrap().remove("kind");
    }
    let project = Project::empty();
    project.write("v1.json", &serde_json::to_string_pretty(&v1).unwrap());
    // Read as a report: rendered as JSON, it is format 2 with the states filled in.
    let out = project.stdout_of(&["render", "--format", "json", "v1.json"]);
    let read: Report = serde_json::from_str(&out).unwrap();
    assert_eq!(read.format_version, 2);
    assert!(
        read.failed_to_run,
        "the failure to run is read from the reasons"
    );
    // The NOT_RUN pair's summary is words that format 1 can only take at their word;
    // every other pair reads as it was written.
    let mut expected = kinds(&report);
    expected[0].2 = MissingKind::FailedToRun;
    assert_eq!(kinds(&read), expected);
    // A version neither 1 nor 2 is refused with the versions this build reads.
    v1["format_version"] = 3.into();
    project.write("v3.json", &serde_json::to_string(&v1).unwrap());
    project
        .cmd()
        .args(["render", "--format", "json", "v3.json"])
        .assert()
        .code(4)
        .stderr(predicates::str::contains("reads version 1 or 2"));
}
