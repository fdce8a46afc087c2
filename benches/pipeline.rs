//! In-process benchmarks of the pipeline's stages (DESIGN.md §7), with criterion.
//!
//! ```sh
//! cargo bench --bench pipeline            # measure
//! cargo bench --bench pipeline -- --test  # run each once (the CI smoke run)
//! ```
//!
//! The inputs are generated at start-up into a temporary folder: manifests of 10 and
//! 1,000 checks, a 50 MB `cargo test` log, 16 MiB of a check's output of two kinds (for
//! the redacting writer alone), and the partial results of 100 environments ×
//! 200 checks (one real `run` of the binary, copied under 100 environment names, as
//! `scripts/bench.sh` does for the whole-process figure).

use std::fmt::Write as _;
use std::hint::black_box;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

use cargo_verify_matrix::manifest::{self, Gate, Manifest};
use cargo_verify_matrix::plan;
use cargo_verify_matrix::render::{Budget, Format, RenderOptions, render};
use cargo_verify_matrix::results::{PartialResult, Report, merge};
use cargo_verify_matrix::run::effect;
use cargo_verify_matrix::untrusted::Redactor;
use cargo_verify_matrix::untrusted::redacting::{Masks, RedactingWriter};

/// A manifest of `checks` checks over three environments, in the shapes users write:
/// plain commands, test gates, per-environment restrictions, variables.
fn manifest_text(checks: usize) -> String {
    let mut text = String::from(
        "version: 1\n\
         environments:\n\
         \x20 - { name: linux, runs-on: ubuntu-latest, detect: { os: linux } }\n\
         \x20 - { name: macos, runs-on: macos-latest, detect: { os: macos } }\n\
         \x20 - { name: windows, runs-on: windows-latest, detect: { os: windows } }\n\
         defaults:\n\
         \x20 timeout: 30m\n\
         \x20 env: { CARGO_TERM_COLOR: never }\n\
         checks:\n",
    );
    for i in 0..checks {
        match i % 4 {
            0 => writeln!(text, "  - {{ id: test-{i}, test: cargo test -p crate{i} --locked }}"),
            1 => writeln!(
                text,
                "  - id: lint-{i}\n    name: Lint {i}\n    run: cargo clippy -p crate{i} -- -D warnings\n    gate: lint"
            ),
            2 => writeln!(
                text,
                "  - {{ id: fmt-{i}, run: cargo fmt --check, gate: format, environment: linux }}"
            ),
            _ => writeln!(
                text,
                "  - id: build-{i}\n    run: cargo build -p crate{i}\n    timeout: 5m\n    env: {{ RUSTFLAGS: \"-D warnings\" }}"
            ),
        }
        .expect("writing to a String");
    }
    text
}

fn parse(text: &str) -> Manifest {
    manifest::from_yaml_text(Path::new("verify-matrix.yml"), text).expect("a valid manifest")
}

fn manifest_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("manifest parse + validate");
    for checks in [10, 1_000] {
        let text = manifest_text(checks);
        assert_eq!(parse(&text).checks.len(), checks);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(format!("{checks} checks"), |b| {
            b.iter(|| parse(black_box(&text)))
        });
    }
    group.finish();
}

fn plan_benches(c: &mut Criterion) {
    let manifest = parse(&manifest_text(1_000));
    let mut group = c.benchmark_group("plan");
    group.bench_function("1000 checks × 3 environments", |b| {
        b.iter(|| plan::plan(black_box(&manifest), None))
    });
    let planned = plan::plan(&manifest, None);
    group.bench_function("github strategy.matrix of 1000 checks", |b| {
        b.iter(|| black_box(&planned).github_matrix().to_string())
    });
    group.finish();
}

/// Writes chunks from `chunk` (which appends one to the text and says how many tests
/// it passed) to `path` until `target` bytes: the log's size and its passed tests.
fn write_log(path: &Path, target: usize, mut chunk: impl FnMut(&mut String) -> u64) -> (u64, u64) {
    let mut text = String::with_capacity(target + 4096);
    let mut passed = 0;
    while text.len() < target {
        passed += chunk(&mut text);
    }
    std::fs::write(path, &text).expect("writing the log");
    (text.len() as u64, passed)
}

/// A `cargo test` binary's run: its 200 tests, each `ok` as `ok` reads (escapes and
/// all), and its summary.
fn cargo_test_run(text: &mut String, binary: usize, ok: &str) -> u64 {
    writeln!(text, "\nrunning 200 tests").unwrap();
    for t in 0..200 {
        writeln!(
            text,
            "test module_{binary}::case_{t}::does_what_it_says ... {ok}"
        )
        .unwrap();
    }
    writeln!(
        text,
        "\ntest result: {ok}. 200 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.42s\n"
    )
    .unwrap();
    200
}

/// A 50 MB `cargo test` log: many test binaries, each listing its tests and ending in
/// the summary line the scan counts, with compiler noise between them.
fn write_test_log(path: &Path, target: usize) -> (u64, u64) {
    let mut binaries = 0;
    write_log(path, target, |text| {
        binaries += 1;
        writeln!(
            text,
            "   Compiling crate{binaries} v0.1.0 (/work/crate{binaries})"
        )
        .unwrap();
        writeln!(
            text,
            "     Running unittests src/lib.rs (target/debug/deps/crate{binaries}-0123abcd)"
        )
        .unwrap();
        cargo_test_run(text, binaries, "ok")
    })
}

/// A 50 MB `go test -v` log: every line read by the scan (a test's start and its
/// result, a package's line after each thousand).
fn write_go_verbose_log(path: &Path, target: usize) -> (u64, u64) {
    let mut passed = 0;
    write_log(path, target, |text| {
        passed += 1;
        writeln!(
            text,
            "=== RUN   TestParse/case_{passed}\n    --- PASS: TestParse/case_{passed} (0.00s)"
        )
        .unwrap();
        if passed % 1000 == 0 {
            writeln!(text, "ok  \texample.com/pkg{passed}\t0.123s").unwrap();
        }
        1
    })
}

/// A 50 MB `cargo test` log coloured as a terminal shows it: an escape in every line,
/// each line looked at without them.
fn write_coloured_log(path: &Path, target: usize) -> (u64, u64) {
    let mut binaries = 0;
    write_log(path, target, |text| {
        binaries += 1;
        cargo_test_run(text, binaries, "\x1b[32mok\x1b[0m")
    })
}

fn effectiveness_benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    type Writer = fn(&Path, usize) -> (u64, u64);
    let logs: [(&str, &str, Writer); 3] = [
        ("cargo test", "tests.log", write_test_log),
        ("go test -v", "go.log", write_go_verbose_log),
        ("coloured cargo test", "coloured.log", write_coloured_log),
    ];
    let mut group = c.benchmark_group("effectiveness");
    group.sample_size(10);
    for (what, name, write) in logs {
        let log = dir.path().join(name);
        let (bytes, passed) = write(&log, 50 * 1000 * 1000);
        let first = effect::assess_file(Gate::Test, &log);
        assert_eq!(
            first.tests_executed,
            Some(passed),
            "the scan counts every test of the {what} log"
        );
        group.throughput(Throughput::Bytes(bytes));
        group.bench_function(format!("scan of a 50 MB {what} log"), |b| {
            b.iter(|| effect::assess_file(Gate::Test, black_box(&log)))
        });
    }
    group.finish();
}

/// The partial results of `envs` environments × `checks` checks under `root`, one file
/// per environment, as artifacts lay them out. One check in 100 fails with a 200-line
/// log, so the matrix carries failure details and log tails.
fn write_partials(root: &Path, envs: usize, checks: usize) -> PathBuf {
    let names: Vec<String> = (1..=envs).map(|e| format!("e{e:03}")).collect();
    let mut text = String::from("version: 1\nenvironments:\n");
    for name in &names {
        writeln!(text, "  - name: {name}").unwrap();
    }
    text.push_str("checks:\n");
    for i in 1..=checks {
        if i % 100 == 7 {
            writeln!(text, "  - {{ id: c{i}, run: 'seq 1 200; exit 1' }}").unwrap();
        } else {
            writeln!(text, "  - {{ id: c{i}, run: 'true' }}").unwrap();
        }
    }
    std::fs::write(root.join("verify-matrix.yml"), text).unwrap();
    let artifacts = root.join("artifacts");
    let first = &names[0];
    let status = Command::new(env!("CARGO_BIN_EXE_cargo-verify-matrix"))
        .args(["-q", "run", "--env", first, "--out"])
        .arg(artifacts.join(first))
        .current_dir(root)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("running cargo-verify-matrix");
    assert_eq!(status.code(), Some(1), "the failing checks fail the run");
    let source = artifacts.join(first);
    let result =
        std::fs::read_to_string(source.join(format!("verify-matrix-{first}.json"))).unwrap();
    let result: serde_json::Value = serde_json::from_str(&result).unwrap();
    for name in &names[1..] {
        let folder = artifacts.join(name);
        let logs = folder.join("logs").join(name);
        std::fs::create_dir_all(&logs).unwrap();
        for entry in std::fs::read_dir(source.join("logs").join(first)).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), logs.join(entry.file_name())).unwrap();
        }
        let mut copy = result.clone();
        copy["environment"] = name.as_str().into();
        // The checks are a table (format 3): each value found by its column.
        let columns = copy["checks"]["columns"].as_array().unwrap().clone();
        let at = |field: &str| columns.iter().position(|c| c == field).unwrap();
        let (id_at, env_at, log_at) = (at("command_id"), at("environment"), at("log_path"));
        for row in copy["checks"]["rows"].as_array_mut().unwrap() {
            let id = row[id_at].as_str().unwrap().to_owned();
            row[env_at] = name.as_str().into();
            row[log_at] = format!("logs/{name}/{id}.log").into();
        }
        let json = serde_json::to_string_pretty(&copy).unwrap();
        std::fs::write(folder.join(format!("verify-matrix-{name}.json")), json).unwrap();
    }
    artifacts
}

/// What `merge` does before writing: collect the files, rebuild the manifest each
/// embeds, build the report.
fn merge_report(artifacts: &Path, report_dir: &Path) -> Report {
    let collected = merge::collect(&[artifacts.to_path_buf()], report_dir).expect("mergeable");
    let manifest = collected.partials[0]
        .embedded_manifest()
        .expect("the embedded manifest");
    let partials: Vec<PartialResult> = collected.partials.into_iter().map(|l| l.result).collect();
    Report::build(&manifest, &partials)
}

fn options(report: &Report, root: &Path, budget: Budget) -> RenderOptions {
    RenderOptions {
        log_root: Some(root.to_path_buf()),
        budget,
        ..RenderOptions::for_report(report)
    }
}

/// The markdown matrix, as `render` makes it (quoting included).
fn markdown(report: &Report, options: &RenderOptions) -> String {
    render(report, Format::Markdown, options).unwrap()
}

fn merge_render_benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path();
    let artifacts = write_partials(root, 100, 200);
    let report = merge_report(&artifacts, root);
    assert_eq!(report.environments.len(), 100);
    let full = markdown(&report, &options(&report, root, Budget::UNLIMITED));
    let comment = Budget {
        max_bytes: None,
        max_chars: Some(65_536),
    };
    let cut = markdown(&report, &options(&report, root, comment));
    assert!(
        full.chars().count() > 65_536,
        "the budget has something to cut"
    );
    assert!(cut.chars().count() <= 65_536, "the budgeted render fits");

    let mut group = c.benchmark_group("merge + render");
    group.sample_size(10);
    group.bench_function("merge 100 files (100 environments × 200 checks)", |b| {
        b.iter(|| merge_report(black_box(&artifacts), root))
    });
    group.bench_function("merge + render markdown", |b| {
        b.iter(|| {
            let report = merge_report(black_box(&artifacts), root);
            markdown(&report, &options(&report, root, Budget::UNLIMITED))
        })
    });
    group.bench_function("render markdown", |b| {
        b.iter_batched(
            || options(&report, root, Budget::UNLIMITED),
            |options| markdown(black_box(&report), &options),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("render markdown within 65,536 characters", |b| {
        b.iter_batched(
            || options(&report, root, comment),
            |options| markdown(black_box(&report), &options),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

/// `bytes` of a check's output of each kind the output path is measured with
/// (`scripts/bench-output.sh`): base64 lines of 100 columns (no marker a redactor
/// looks for, bar chance), and test results with a token shape's marker in every line.
fn output_kinds(bytes: usize) -> [(&'static str, Vec<u8>); 2] {
    const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut base64 = Vec::with_capacity(bytes);
    while base64.len() < bytes {
        for _ in 0..100 {
            base64.push(BASE64[(xorshift(&mut state) % 64) as usize]);
        }
        base64.push(b'\n');
    }
    base64.truncate(bytes);
    let line = b"test tests::parse_ok ... ok (ghp_1234 is not a token) 0.01s\n";
    let results: Vec<u8> = line.iter().copied().cycle().take(bytes).collect();
    [("base64 lines", base64), ("test-result lines", results)]
}

/// The next number of xorshift64: the same pseudo-random text in every run.
fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// `count` secret values of 40 letters and digits, as `*_TOKEN` variables hold them.
fn secrets(count: usize) -> Redactor {
    let mut state = 0x2545_F491_4F6C_DD1D_u64 ^ count as u64;
    Redactor::from_vars((0..count).map(|i| {
        let value: String = (0..40)
            .map(|_| {
                char::from(
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                        [(xorshift(&mut state) % 62) as usize],
                )
            })
            .collect();
        (format!("BENCH_{i}_TOKEN"), value)
    }))
}

/// The writer between a check and its log, alone: its output in the reads the tool
/// makes of the pipe (256 KiB), redacted into nothing.
fn redacting_writer_benches(c: &mut Criterion) {
    let bytes = 16 * 1024 * 1024;
    let mut group = c.benchmark_group("redacting writer");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(10);
    for (kind, text) in output_kinds(bytes) {
        for count in [0, 40, 1000] {
            let masks = Masks::new(secrets(count));
            let mut written = 0u64;
            let mut w = RedactingWriter::new(CountingSink(&mut written), masks.clone());
            for block in text.chunks(256 * 1024) {
                w.write_all(block).expect("writing to a sink");
            }
            w.finish().expect("finishing");
            assert_eq!(written, bytes as u64, "nothing in {kind} is masked");
            group.bench_function(format!("{kind}, {count} secrets"), |b| {
                b.iter(|| {
                    let mut w = RedactingWriter::new(std::io::sink(), masks.clone());
                    for block in black_box(&text).chunks(256 * 1024) {
                        w.write_all(block).expect("writing to a sink");
                    }
                    w.finish().expect("finishing")
                })
            });
        }
    }
    group.finish();
}

/// A sink that counts what it is given.
struct CountingSink<'a>(&'a mut u64);

impl std::io::Write for CountingSink<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        *self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

criterion_group!(
    benches,
    manifest_benches,
    plan_benches,
    effectiveness_benches,
    redacting_writer_benches,
    merge_render_benches
);
criterion_main!(benches);
