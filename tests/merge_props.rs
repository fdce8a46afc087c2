//! Property tests of merging: any split of a complete set of results into files, in any
//! order and folder layout, merges to the same report; removing any file makes the
//! verdict not VERIFIED.

mod common;

use std::path::{Path, PathBuf};

use cargo_verify_matrix::manifest::{Manifest, from_yaml_text};
use cargo_verify_matrix::results::merge::collect;
use cargo_verify_matrix::results::{CheckResult, PartialResult, Report, Source, Status, Verdict};
use common::{sample_partial, sample_result};
use proptest::prelude::*;

const ENVS: [&str; 3] = ["linux", "macos", "windows"];
const CHECKS: [&str; 4] = ["fmt", "lint", "unit", "docs"];

fn manifest() -> Manifest {
    let checks: String = CHECKS
        .iter()
        .map(|c| format!("  - {{ id: {c}, run: 'true' }}\n"))
        .collect();
    let envs: String = ENVS.iter().map(|e| format!("  - name: {e}\n")).collect();
    from_yaml_text(
        Path::new("verify-matrix.yml"),
        &format!("version: 1\nenvironments:\n{envs}checks:\n{checks}"),
    )
    .unwrap()
}

/// A passing result, with no log (the merge has nothing to confine).
fn check(id: &str, env: &str) -> CheckResult {
    CheckResult {
        log_path: None,
        ..sample_result(id, env, Status::Pass, Some(0), "passed (exit 0) in 5ms")
    }
}

fn partial(m: &Manifest, env: &str, checks: Vec<CheckResult>) -> PartialResult {
    let source = Source {
        commit: Some("abc".into()),
        ..Source::default()
    };
    sample_partial(m, env, source, checks)
}

/// One file's worth: an environment and the checks it carries.
#[derive(Debug, Clone)]
struct Piece {
    env: usize,
    checks: Vec<usize>,
    folder: String,
}

/// Splits every (environment, check) pair into pieces: each environment's checks are
/// cut at random points, each piece goes to a random folder, and the pieces come in a
/// random order.
fn pieces() -> impl Strategy<Value = Vec<Piece>> {
    let cuts = prop::collection::vec(
        prop::collection::vec(any::<bool>(), CHECKS.len() - 1),
        ENVS.len(),
    );
    let folders = prop::collection::vec(
        prop::sample::select(vec!["", "a", "a/b", "artifact-1", "x/y/z"]),
        12,
    );
    (cuts, folders, any::<prop::sample::Index>()).prop_map(|(cuts, folders, rotate)| {
        let mut out = Vec::new();
        for (env, cut) in cuts.iter().enumerate() {
            let mut current = vec![0];
            for (i, split) in cut.iter().enumerate() {
                if *split {
                    out.push((env, std::mem::take(&mut current)));
                }
                current.push(i + 1);
            }
            out.push((env, current));
        }
        let mut pieces: Vec<Piece> = out
            .into_iter()
            .enumerate()
            .map(|(i, (env, checks))| Piece {
                env,
                checks,
                folder: folders[i % folders.len()].to_owned(),
            })
            .collect();
        let shift = rotate.index(pieces.len());
        pieces.rotate_left(shift);
        pieces
    })
}

fn write(dir: &Path, m: &Manifest, pieces: &[Piece]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        let env = ENVS[piece.env];
        let checks = piece
            .checks
            .iter()
            .map(|c| check(CHECKS[*c], env))
            .collect();
        let folder = dir.join(&piece.folder);
        std::fs::create_dir_all(&folder).unwrap();
        let path = folder.join(format!("part-{i}-{env}.json"));
        std::fs::write(&path, serde_json::to_vec(&partial(m, env, checks)).unwrap()).unwrap();
        files.push(path);
    }
    files
}

fn merged(m: &Manifest, dir: &Path) -> Report {
    let collected = collect(&[dir.to_path_buf()], dir).unwrap();
    let partials: Vec<PartialResult> = collected.partials.into_iter().map(|l| l.result).collect();
    let report = Report::build(m, &partials);
    // Moving the results into the rows (as `merge` does) judges exactly as copying them.
    assert_eq!(Report::build_from(m, partials), report);
    report
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn any_split_and_layout_merges_to_the_same_verified_report(pieces in pieces()) {
        let m = manifest();
        let whole = tempfile::tempdir().unwrap();
        let all: Vec<Piece> = (0..ENVS.len())
            .map(|env| Piece { env, checks: (0..CHECKS.len()).collect(), folder: String::new() })
            .collect();
        write(whole.path(), &m, &all);
        let expected = merged(&m, whole.path());
        prop_assert_eq!(expected.verdict, Verdict::Verified);

        let split = tempfile::tempdir().unwrap();
        write(split.path(), &m, &pieces);
        let actual = merged(&m, split.path());
        prop_assert_eq!(&actual, &expected);
    }

    #[test]
    fn removing_any_file_makes_the_verdict_not_verified(pieces in pieces(), victim in any::<prop::sample::Index>()) {
        let m = manifest();
        let dir = tempfile::tempdir().unwrap();
        let files = write(dir.path(), &m, &pieces);
        std::fs::remove_file(&files[victim.index(files.len())]).unwrap();
        let report = merged(&m, dir.path());
        prop_assert_eq!(report.verdict, Verdict::NotVerified);
        prop_assert_eq!(report.exit_code(), 3);
        prop_assert!(!report.missing.is_empty());
    }
}
