//! Property test of `merge`'s re-derivation: whatever a result file claims, a pair
//! passes only when its facts pass against the manifest, a PASS the facts do not
//! support is a named contradiction, and no row ever shows an exit code the result did
//! not have.

mod common;

use std::path::Path;

use cargo_verify_matrix::manifest::{ExpectExit, Manifest, from_yaml_text};
use cargo_verify_matrix::results::{
    CheckResult, Leaked, Report, RowResult, Source, Status, Verdict,
};
use common::{sample_partial, sample_result};
use proptest::prelude::*;

const MANIFEST: &str = "version: 1
environments: [{ name: linux }]
checks:
  - { id: unit, test: cargo test }
  - { id: audit, run: cargo audit, expect: failure }
  - { id: lint, run: cargo clippy, exit-code: 2 }
";

fn manifest() -> Manifest {
    from_yaml_text(Path::new("verify-matrix.yml"), MANIFEST).unwrap()
}

/// An honest, passing result of `id`, as `run` writes it.
fn honest(m: &Manifest, id: &str) -> CheckResult {
    let check = m.checks.iter().find(|c| c.id.as_str() == id).unwrap();
    let exit = match check.expect {
        ExpectExit::Code(code) => code,
        ExpectExit::Failure => 1,
    };
    CheckResult {
        must_be_effective: check.must_be_effective,
        gate_effective: Some(true),
        required_exit_code: check.expect.required_code(),
        ..sample_result(id, "linux", Status::Pass, Some(exit), "passed")
    }
}

#[derive(Debug, Clone)]
struct Claim {
    status: Status,
    exit_code: Option<i32>,
    required_exit_code: Option<i32>,
    must_be_effective: bool,
    gate_effective: Option<bool>,
    timed_out: bool,
    leaked: bool,
    refused: bool,
}

fn claim() -> impl Strategy<Value = Claim> {
    let status = prop_oneof![
        4 => Just(Status::Pass),
        1 => Just(Status::Fail),
        1 => Just(Status::Error),
        1 => Just(Status::NotRun)
    ];
    let code = prop_oneof![
        1 => Just(None),
        4 => (-2i32..4).prop_map(Some),
        1 => any::<i32>().prop_map(Some)
    ];
    let required = prop_oneof![Just(None), (-1i32..4).prop_map(Some)];
    (
        status,
        code,
        required,
        any::<bool>(),
        prop::option::of(any::<bool>()),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.2),
    )
        .prop_map(
            |(
                status,
                exit_code,
                required_exit_code,
                mbe,
                gate_effective,
                timed_out,
                leaked,
                refused,
            )| Claim {
                status,
                exit_code,
                required_exit_code,
                must_be_effective: mbe,
                gate_effective,
                timed_out,
                leaked,
                refused,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_pair_passes_only_when_its_facts_do(which in 0usize..3, claim in claim()) {
        let m = manifest();
        let id = ["unit", "audit", "lint"][which];
        let check = m.checks.iter().find(|c| c.id.as_str() == id).unwrap();
        let mut checks: Vec<CheckResult> =
            ["unit", "audit", "lint"].iter().map(|c| honest(&m, c)).collect();
        let spoiled = &mut checks[which];
        spoiled.status = claim.status;
        spoiled.exit_code = claim.exit_code;
        spoiled.required_exit_code = claim.required_exit_code;
        spoiled.must_be_effective = claim.must_be_effective;
        spoiled.gate_effective = claim.gate_effective;
        spoiled.timed_out = claim.timed_out;
        if claim.leaked {
            spoiled.leaked = vec![Leaked { pid: 9, command: "sleep 9".into() }];
        }
        if claim.refused {
            spoiled.refused = Some("refused".into());
        }
        let report = Report::build(&m, &[sample_partial(&m, "linux", Source::default(), checks)]);

        let facts_pass = claim.status == Status::Pass
            && claim
                .exit_code
                .is_some_and(|c| (0..=255).contains(&c) && check.expect.accepts(c))
            && claim.required_exit_code == check.expect.required_code()
            && (!check.must_be_effective
                || (claim.must_be_effective && claim.gate_effective == Some(true)))
            && !claim.timed_out
            && !claim.leaked
            && !claim.refused;
        let row = report.rows.iter().find(|r| r.check == id);
        prop_assert_eq!(
            row.is_some_and(|r| r.result == RowResult::Pass),
            facts_pass,
            "row {:?} for {:?}", row.map(|r| r.result), claim
        );
        prop_assert_eq!(report.verdict == Verdict::Verified, facts_pass, "{:?}", report.reasons);
        if let Some(row) = row {
            prop_assert_eq!(Some(row.exit_code), claim.exit_code, "no made-up exit code");
            prop_assert_eq!(row.required_exit_code, check.expect.required_code());
            prop_assert_eq!(row.detail.required_exit_code, check.expect.required_code());
        }
        if claim.status == Status::Pass && !facts_pass {
            prop_assert!(
                report.contradictions.iter().any(|c| c.check == id),
                "an unsupported PASS is named: {:?}", report.contradictions
            );
            prop_assert_eq!(report.exit_code(), 1, "a contradiction is a failure");
        }
    }
}
