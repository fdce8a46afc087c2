//! The comment and the HTML report as people see them: the markdown matrix rendered the
//! way GitHub renders comments (cmark-gfm, through the `cmarkgfm` Python package) and the
//! HTML page, each screenshotted in headless Chromium (Debian's `chromium`, which
//! `scripts/test.sh` installs), then checked: the pages have their tables, their text
//! shows as written, and the screenshots show the grid's colours.
//!
//! `VERIFY_MATRIX_UPDATE_SCREENSHOTS=1` copies the screenshots to `docs/screenshots/`,
//! which README shows.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Project, repo_root};

/// A matrix with every kind of cell: test counts, a required failure, an optional
/// (advisory) failure, and a named check.
const MANIFEST: &str = "version: 1
environments: [{name: linux}, {name: macos}]
checks:
  - id: unit_tests
    name: Unit tests
    test: 'printf \"running 218 tests\\ntest result: ok. 218 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.02s\\n\"'
  - id: docs
    name: Docs build
    run: 'echo \"warning: unresolved link to `Report`\"; test $VERIFY_MATRIX_ENV != macos'
  - { id: lint, run: 'echo \"3 warnings\"; exit 1', required: false, environment: linux }
";

/// GitHub's comment styles, as far as the matrix uses them.
const GITHUB_CSS: &str = "body{font-family:-apple-system,'Segoe UI','Noto Sans',Helvetica,Arial,sans-serif;\
font-size:14px;line-height:1.5;color:#1f2328;background:#fff;margin:16px;max-width:900px}\
table{border-collapse:collapse;margin:0 0 16px}th,td{border:1px solid #d1d9e0;padding:6px 13px}\
th{font-weight:600}tr:nth-child(2n){background:#f6f8fa}code,pre{font-family:ui-monospace,monospace;\
background:#eff1f3;border-radius:6px}pre{padding:16px}details{margin:8px 0}\
h2{border-bottom:1px solid #d1d9e0;padding-bottom:.3em}";

fn chromium() -> PathBuf {
    let name = std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".to_owned());
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join(&name))
        .find(|path| path.is_file());
    found.unwrap_or_else(|| {
        panic!("`{name}` is not on PATH: scripts/test.sh installs Debian's chromium package")
    })
}

/// A screenshot of `page` (1000 × 1400), as RGBA pixels with its width.
fn screenshot(page: &Path, png: &Path) -> (Vec<u8>, u32) {
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            "--window-size=1000,1400",
        ])
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        png.is_file(),
        "chromium wrote no screenshot: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((info.width, info.height), (1000, 1400));
    let rgba = match info.color_type {
        png::ColorType::Rgba => pixels[..info.buffer_size()].to_vec(),
        png::ColorType::Rgb => pixels[..info.buffer_size()]
            .chunks(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    (rgba, info.width)
}

/// How many pixels are within 6 of `hex` in every channel.
fn pixels_of(rgba: &[u8], hex: u32) -> usize {
    let want = [(hex >> 16) as u8, (hex >> 8) as u8, hex as u8];
    rgba.chunks(4)
        .filter(|p| (0..3).all(|i| p[i].abs_diff(want[i]) <= 6))
        .count()
}

/// Pixels that are not (nearly) white.
fn ink(rgba: &[u8]) -> usize {
    rgba.chunks(4)
        .filter(|p| p[..3].iter().any(|&c| c < 200))
        .count()
}

fn project() -> Project {
    let project = Project::new(MANIFEST);
    project.run_envs(&["linux", "macos"]);
    project
}

fn render(project: &Project, format: &str) -> String {
    project.stdout_of(&["render", "--format", format, "results"])
}

fn keep(png: &Path, name: &str) {
    if std::env::var_os("VERIFY_MATRIX_UPDATE_SCREENSHOTS").is_some() {
        let dir = repo_root().join("docs/screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(png, dir.join(name)).unwrap();
    }
}

/// The reviewer's scenario: 3 checks × 3 environments, one test failing on macos (new
/// against the base), an optional check failing, windows' leg lost, and a test deleted
/// since the base.
const REVIEW_MANIFEST: &str = r#"version: 1
environments: [{name: linux}, {name: macos}, {name: windows}]
checks:
  - id: unit
    name: Unit tests
    test: |
      { echo '<testsuite name="s">'; while read t; do if [ "$t" = parse_dates ] && [ "$VERIFY_MATRIX_ENV" = macos ] && [ -e fail.on ]; then echo "<testcase classname=\"tests.dates\" name=\"$t\" file=\"tests/dates.rs\" line=\"42\"><failure message=\"assertion failed: left == right (2024-02-29 vs 2024-03-01)\">boom</failure></testcase>"; else echo "<testcase classname=\"tests.dates\" name=\"$t\"/>"; fi; done < tests.txt; echo '</testsuite>'; } > junit.xml
      ! grep -q failure junit.xml
    reports: junit.xml
  - { id: lint, name: Clippy, run: 'true' }
  - { id: docs, run: 'echo "3 broken links"; exit 1', required: false }
"#;

/// The reviewer's scenario, merged against its base: the markdown comment.
fn review_comment() -> (Project, String) {
    let project = Project::new(REVIEW_MANIFEST);
    project.write("tests.txt", "a\nb\nparse_dates\nd\ne\nf\n");
    project.write("tests/dates.rs", &"// the dates tests\n".repeat(50));
    for env in ["linux", "macos", "windows"] {
        project.run_env(env, &format!("base/{env}"));
    }
    project.merge_into("base", "base.json");
    project.commit_all("base");
    project.write("tests.txt", "a\nb\nparse_dates\nd\ne\n");
    project.write("fail.on", "");
    for env in ["linux", "macos"] {
        project.run_env(env, &format!("head/{env}"));
    }
    let merged = project
        .std_cmd()
        .args([
            "merge",
            "--baseline",
            "base.json",
            "--out",
            "head.json",
            "head",
        ])
        .output()
        .unwrap();
    assert_eq!(merged.status.code(), Some(1), "{merged:?}");
    let markdown = project.stdout_of(&["render", "--format", "markdown", "head.json"]);
    (project, markdown)
}

/// `markdown` as GitHub renders it: comments with single newlines as line breaks
/// (`hard_breaks`), job and check-run summaries as documents (without).
fn github_html(project: &Project, markdown: &str, hard_breaks: bool) -> String {
    project.write("comment.md", markdown);
    let options = if hard_breaks {
        "Options.CMARK_OPT_UNSAFE | Options.CMARK_OPT_HARDBREAKS"
    } else {
        "Options.CMARK_OPT_UNSAFE"
    };
    // cmark-gfm with GitHub's extensions; raw HTML kept, as GitHub keeps <details>.
    let out = Command::new("python3")
        .args([
            "-c",
            &format!(
                "import sys, cmarkgfm\n\
                 from cmarkgfm.cmark import Options\n\
                 text = open(sys.argv[1], encoding='utf-8').read()\n\
                 sys.stdout.write(cmarkgfm.github_flavored_markdown_to_html(text, options={options}))"
            ),
        ])
        .arg(project.path().join("comment.md"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cmarkgfm must be installed (scripts/test.sh does): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_comment_answers_first_in_both_of_githubs_modes() {
    let (project, markdown) = review_comment();
    // The answer in the first lines under the verdict: what failed (the test and its
    // message), since when, the missing leg, the dropped test and how to allow it.
    let top: Vec<&str> = markdown.lines().skip(1).take(8).collect();
    let top = top.join("\n");
    assert!(
        top.starts_with("## ❌ Environment Verification Matrix: NOT VERIFIED\n"),
        "{markdown}"
    );
    let first = markdown.lines().nth(3).unwrap();
    assert!(
        first.starts_with("- ❌ **unit failed in macos (exit 1)**: `tests.dates › parse_dates` at tests/dates.rs:42 — assertion failed: left == right (2024-02-29 vs 2024-03-01) · **new**"),
        "{markdown}"
    );
    assert!(
        top.contains("- ⚠️ **No result from the windows leg**"),
        "{markdown}"
    );
    assert!(
        top.contains("↓ **unit in linux ran 5 tests; "),
        "{markdown}"
    );
    assert!(top.contains("`tests.dates › f` vanished"), "{markdown}");
    assert!(
        top.contains("`verify-matrix:allow-weakening` label"),
        "{markdown}"
    );
    // Per-cell signs, and a legend for them.
    assert!(
        markdown.contains("| unit · Unit tests | ✅ 5 ↓1 | ❌ 1 of 5 | ⚠️ no result |"),
        "{markdown}"
    );
    assert!(markdown.contains("⚠️ no result (blocks)"), "{markdown}");
    // Required and optional counted apart: the optional check's failures are not
    // counted as if they blocked.
    assert!(
        markdown.contains(": 1 new failure, 2 (2 optional) pre-existing, 0 fixed, "),
        "{markdown}"
    );
    assert!(
        markdown.contains(" · 1 failed · 2 missing · optional: 2 failed, 1 missing · "),
        "{markdown}"
    );
    // Said once: the missing environment is not blamed on infrastructure outside the
    // folded strict block, and the strict table is folded.
    let strict = markdown
        .find("<details><summary>Strict matrix")
        .expect("the strict table is folded");
    assert!(!markdown[..strict].contains("INFRA_BLOCKED"), "{markdown}");
    assert!(
        !markdown[..strict].contains("| Check | Environment |"),
        "{markdown}"
    );
    for (mode, hard_breaks) in [("comment", true), ("document", false)] {
        let body = github_html(&project, &markdown, hard_breaks);
        assert_eq!(
            body.matches("<table>").count(),
            1,
            "{mode}: the grid only:\n{body}"
        );
        assert!(
            body.contains("<td>unit · Unit tests</td>"),
            "{mode}: {body}"
        );
        assert!(
            body.contains("<td align=\"center\">🟡 failed</td>"),
            "{mode}: {body}"
        );
        // The lines that stand alone do in both modes: the counts and the commit.
        let summary = body
            .find("3 of 6 required pairs passed")
            .expect("the counts");
        let commit = body.find("Commit ").expect("the commit line");
        assert!(
            body[summary..commit].contains("<br />"),
            "{mode}: the counts and the commit run together:\n{body}"
        );
        // The strict lines keep their lines (a code block) for people and regexes.
        assert!(
            body.contains(
                "Environments Tested: linux, macos\nAll Required Environments: NOT VERIFIED\n"
            ),
            "{mode}: {body}"
        );
        // The summaries inside <summary> read as written: no markdown escapes showing.
        let summaries: Vec<&str> = body
            .split("<summary>")
            .skip(1)
            .map(|s| s.split("</summary>").next().unwrap())
            .collect();
        assert!(summaries.iter().all(|s| !s.contains('\\')), "{summaries:?}");
        let page = project.write(
            &format!("{mode}.html"),
            &format!(
                "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>{GITHUB_CSS}</style></head>\
                 <body>{body}</body></html>"
            ),
        );
        let png = project.path().join(format!("{mode}.png"));
        let (rgba, _) = screenshot(&page, &png);
        assert!(ink(&rgba) > 5_000, "{mode}: rendered nearly blank");
        assert!(
            pixels_of(&rgba, 0xf6f8fa) > 2_000,
            "{mode}: no table rows drawn"
        );
        keep(&png, &format!("{mode}.png"));
    }
}

#[test]
fn the_html_report_renders_with_its_colours() {
    let project = project();
    let html = render(&project, "html");
    let page = project.write("report.html", &html);
    let png = project.path().join("report.png");
    let (rgba, _) = screenshot(&page, &png);
    assert!(ink(&rgba) > 5_000, "the report rendered nearly blank");
    for (what, colour) in [
        ("passed cells", 0xdafbe1),
        ("failed cells", 0xffebe9),
        ("the advisory cell", 0xddf4ff),
    ] {
        assert!(
            pixels_of(&rgba, colour) > 300,
            "{what} (#{colour:06x}) are not drawn"
        );
    }
    keep(&png, "report.png");
}

#[test]
fn the_folded_page_of_a_huge_matrix_renders_failures_first() {
    // 2 environments × 1,001 checks: more pairs than the page shows whole.
    let mut manifest = String::from(
        "version: 1\nenvironments: [{name: linux}, {name: macos}]\nchecks:\n  - id: broken\n    run: 'echo \"assertion failed: left == right\"; test $VERIFY_MATRIX_ENV != linux'\n",
    );
    for c in 0..1000 {
        manifest.push_str(&format!("  - {{id: c{c:04}, run: 'true'}}\n"));
    }
    let project = Project::new(&manifest);
    project.run_envs(&["linux", "macos"]);
    let html = render(&project, "html");
    assert!(html.contains("This matrix has 2002 pairs"));
    assert!(html.find("<h2>Failures (1)</h2>") < html.find("<h2>Checks (1001)</h2>"));
    let page = project.write("folded.html", &html);
    let png = project.path().join("folded.png");
    let (rgba, _) = screenshot(&page, &png);
    assert!(ink(&rgba) > 5_000, "the page rendered nearly blank");
    for (what, colour) in [
        ("the note that the page is folded", 0xddf4ff),
        ("the failing check's red edge", 0xcf222e),
        ("the passing checks' green edges", 0x1a7f37),
    ] {
        assert!(
            pixels_of(&rgba, colour) > 300,
            "{what} (#{colour:06x}) is not drawn"
        );
    }
    keep(&png, "folded.png");
}

/// A pair with a runner report: the HTML page's Tests section, failures open in red,
/// the other outcomes folded with their counts.
#[test]
fn the_html_tests_of_a_report_render_failures_first() {
    let report = concat!(
        "<testsuite name=\"pytest\">",
        "<testcase classname=\"tests.test_api\" name=\"test_login\" time=\"0.012\"/>",
        "<testcase classname=\"tests.test_api\" name=\"test_logout\" time=\"0.004\"/>",
        "<testcase classname=\"tests.test_api\" name=\"test_refresh_token\" time=\"0.031\">",
        "<failure message=\"AssertionError: token expired too early\">",
        "tests/test_api.py:3: AssertionError</failure></testcase>",
        "<testcase classname=\"tests.test_api\" name=\"test_rate_limit\" time=\"0.002\">",
        "<failure message=\"TimeoutError: no answer within 5s\">",
        "tests/test_api.py:2: TimeoutError</failure></testcase>",
        "<testcase classname=\"tests.test_db\" name=\"test_migrations\"><skipped/></testcase>",
        "</testsuite>"
    );
    let project = Project::new(concat!(
        "version: 1\nenvironments: [{name: linux}]\nchecks:\n",
        "  - id: api_tests\n",
        "    test: cp fixture.xml junit.xml; exit 1\n",
        "    reports: junit.xml\n",
    ));
    project.write("fixture.xml", report);
    project.write("tests/test_api.py", "import pytest\n\n\n");
    project.run_envs(&["linux"]);
    let html = render(&project, "html");
    assert!(html.contains("<h2>Tests</h2>"), "{html}");
    assert!(
        html.contains("<summary>Failed (2)</summary>")
            && html.contains("<summary>Passed (2)</summary>"),
        "{html}"
    );
    let page = project.write("tests.html", &html);
    let png = project.path().join("tests.png");
    let (rgba, _) = screenshot(&page, &png);
    assert!(ink(&rgba) > 5_000, "the page rendered nearly blank");
    assert!(
        html.contains("<details class=\"check-fail\" open><summary>api_tests in linux: 2 passed, 2 failed, 1 skipped (junit)</summary>"),
        "{html}"
    );
    // The failing tests' red text (#cf222e, their own colour), open in the Tests section.
    assert!(
        pixels_of(&rgba, 0xcf222e) > 400,
        "the failing tests (#cf222e) are not drawn"
    );
    keep(&png, "tests.png");
}

/// The history dashboard of a few runs: the verdict strip and the heat map drawn in
/// their colours.
#[test]
fn the_history_dashboard_renders_with_its_colours() {
    let project = Project::new(
        "version: 1
environments: [{name: linux}, {name: macos}]
checks:
  - { id: unit, run: 'test $VERIFY_MATRIX_ENV = linux || test -e pass' }
  - { id: lint, run: 'true' }
",
    );
    for run in 1..=8 {
        if run % 3 == 0 {
            project.write("pass", "");
        } else {
            let _ = std::fs::remove_file(project.path().join("pass"));
        }
        let out = format!("results{run}");
        for env in ["linux", "macos"] {
            project
                .std_cmd()
                .args(["run", "--env", env, "--out", &format!("{out}/{env}")])
                .env("GITHUB_REPOSITORY", "o/r")
                .env("GITHUB_RUN_ID", run.to_string())
                .env(
                    "GITHUB_SHA",
                    &format!("{run}{}", "bcdef0123".repeat(5))[..40],
                )
                .output()
                .unwrap();
        }
        project.merge_into(&out, &format!("report{run}.json"));
        let added = project
            .std_cmd()
            .args(["history", "add", &format!("report{run}.json")])
            .output()
            .unwrap();
        assert!(added.status.success(), "{added:?}");
    }
    let page = project.path().join("dashboard.html");
    let out = project
        .std_cmd()
        .args(["history", "html", "--out"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let png = project.path().join("dashboard.png");
    let (rgba, _) = screenshot(&page, &png);
    assert!(ink(&rgba) > 5_000, "the dashboard rendered nearly blank");
    for (what, colour) in [("passed", 0x2da44e), ("failed", 0xcf222e)] {
        assert!(
            pixels_of(&rgba, colour) > 500,
            "{what} cells (#{colour:06x}) are not drawn"
        );
    }
    keep(&png, "dashboard.png");
}
