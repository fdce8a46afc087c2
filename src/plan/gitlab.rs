//! The GitLab CI pipeline that runs a plan (`init --ci gitlab`, docs/gitlab-ci.md): a
//! `plan` job, the legs through `parallel: matrix:` (one entry per environment, and
//! per shard of a sharded one), and a `report` job that needs every leg and runs
//! whatever became of them.
//!
//! GitLab's matrix cannot vary a job's `image:` or `tags:` per entry, so the legs are
//! one job per runner kind, each with its own matrix. Where each environment runs comes
//! from the manifest (docs/gitlab-ci.md, "Where the legs run"):
//!
//! - `container: IMAGE` (or `{ image: IMAGE }`): the job's `image:`;
//! - `runs-on: macos-…`: GitLab.com's hosted macOS runners (`saas-macos-medium-m1`);
//! - `runs-on: windows-…`: its hosted Windows runners (`saas-windows-medium-amd64`,
//!   whose shell is PowerShell);
//! - `runs-on: [self-hosted, LABEL, …]`: `tags:` of those labels;
//! - anything else (`ubuntu-latest`, none): GitLab's Linux runners, with the image the
//!   project's ecosystem suggests.

use std::fmt::Write as _;

use serde_json::Value;

use super::{Plan, PlanEnvironment};

/// Where the pipeline is written, relative to the repository.
pub const PIPELINE_PATH: &str = ".gitlab-ci.yml";

/// GitLab.com's hosted macOS runners' tag, and the image they run.
const MACOS_TAG: &str = "saas-macos-medium-m1";
const MACOS_IMAGE: &str = "macos-15-xcode-16";
/// GitLab.com's hosted Windows runners' tag.
const WINDOWS_TAG: &str = "saas-windows-medium-amd64";

/// Where a group of legs runs.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Runner {
    image: Option<String>,
    tags: Vec<String>,
    /// PowerShell (GitLab's Windows runners) rather than a POSIX shell.
    powershell: bool,
}

/// GitLab.com's hosted Linux runners on Arm.
const ARM_TAG: &str = "saas-linux-medium-arm64";

/// An image reference or a runner tag as the pipeline may name it: letters, digits and
/// `._-/:@+`, beginning with a letter or digit. Anything else (`$` that GitLab would
/// expand, quotes, spaces, control characters) is refused rather than written.
fn plain(text: &str) -> bool {
    text.len() <= 255
        && text
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && text.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | ':' | '@' | '+')
        })
}

fn runner_of(env: &PlanEnvironment, linux_image: &str) -> Result<Runner, String> {
    let container = match &env.container {
        Some(Value::String(image)) => Some(image.clone()),
        Some(Value::Object(o)) => o.get("image").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    };
    if let Some(image) = &container
        && !plain(image)
    {
        return Err(format!(
            "the container image of `{}` ({image:?}) is not one the pipeline can name: letters, digits and `._-/:@+` only",
            env.name
        ));
    }
    let runner = runner_by_labels(env, container, linux_image);
    if let Some(tag) = runner.tags.iter().find(|t| !plain(t)) {
        return Err(format!(
            "the runner label {tag:?} of `{}` is not one the pipeline can name as a tag: letters, digits and `._-/:@+` only",
            env.name
        ));
    }
    Ok(runner)
}

fn runner_by_labels(env: &PlanEnvironment, container: Option<String>, linux_image: &str) -> Runner {
    let labels: Vec<String> = match &env.runs_on {
        Some(Value::String(label)) => vec![label.clone()],
        Some(Value::Array(labels)) => labels
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    let first = labels.first().map(String::as_str).unwrap_or_default();
    if first == "self-hosted" {
        // A runner of one's own: its tags are the other labels (`self-hosted` alone
        // names none, and is kept as the tag to give such a runner).
        let tags = if labels.len() > 1 {
            labels[1..].to_vec()
        } else {
            labels.clone()
        };
        let windows = tags.iter().any(|t| t.eq_ignore_ascii_case("windows"));
        return Runner {
            image: container,
            tags,
            powershell: windows,
        };
    }
    let hosted = |prefix: &str| labels.iter().any(|l| l.starts_with(prefix));
    if hosted("macos") {
        return Runner {
            image: Some(MACOS_IMAGE.to_owned()),
            tags: vec![MACOS_TAG.to_owned()],
            powershell: false,
        };
    }
    if hosted("windows") {
        return Runner {
            image: None,
            tags: vec![WINDOWS_TAG.to_owned()],
            powershell: true,
        };
    }
    let arm = labels
        .iter()
        .any(|l| l.ends_with("-arm") || l.contains("arm64"));
    Runner {
        image: container.or_else(|| Some(linux_image.to_owned())),
        tags: if arm {
            vec![ARM_TAG.to_owned()]
        } else {
            Vec::new()
        },
        powershell: false,
    }
}

/// A string as YAML reads it back: double-quoted, JSON's escapes.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// The pipeline for `plan`: `linux_image` for legs that name no image (the project's
/// toolchain), `manifest` the manifest's path in the repository.
pub fn pipeline(plan: &Plan, linux_image: &str, manifest: &str) -> Result<String, String> {
    let named = !manifest.is_empty()
        && manifest
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
        && manifest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'));
    if !named {
        return Err(format!(
            "the manifest's path in the repository ({manifest:?}) is not one the pipeline can name: letters, digits and `._-/` only, below the repository's top"
        ));
    }
    let base_name = manifest.rsplit('/').next().unwrap_or(manifest);
    let mut groups: Vec<(Runner, Vec<&PlanEnvironment>)> = Vec::new();
    for env in &plan.environments {
        let runner = runner_of(env, linux_image)?;
        match groups.iter_mut().find(|(r, _)| *r == runner) {
            Some((_, envs)) => envs.push(env),
            None => groups.push((runner, vec![env])),
        }
    }
    let mut out = String::new();
    let _ = write!(
        out,
        "# cargo verify-matrix on GitLab CI: `plan` checks {manifest} and marks the commit as\n\
         # being verified; the legs run each environment's checks (one job per environment,\n\
         # and per shard, through `parallel: matrix:`) and keep their results as artifacts;\n\
         # `report` merges them, whatever became of the legs, and publishes the Environment\n\
         # Verification Matrix: a merge-request note, the commit status \"Environment\n\
         # Verification Matrix\", the job log, and the tests in GitLab's own test report.\n\
         # Written by `cargo verify-matrix init --ci gitlab` from {manifest}: when its\n\
         # environments change, run that again with --force.\n\
         #\n\
         # Publishing needs a project access token (role Developer, scope `api`) in a masked\n\
         # CI/CD variable GITLAB_TOKEN; without one the report job still prints the verdict\n\
         # and fails on NOT VERIFIED.\n\
         \n\
         workflow:\n\
         \x20 rules:\n\
         \x20   # Merge requests, and pushes to branches without one (the default branch).\n\
         \x20   - if: $CI_PIPELINE_SOURCE == \"merge_request_event\"\n\
         \x20   - if: $CI_COMMIT_BRANCH && $CI_OPEN_MERGE_REQUESTS\n\
         \x20     when: never\n\
         \x20   - if: $CI_COMMIT_BRANCH\n\
         \n\
         stages: [verify-matrix-plan, verify-matrix-run, verify-matrix-report]\n\
         \n\
         variables:\n\
         \x20 # The command every job runs, installed from a release (its SHA-256 checked) where\n\
         \x20 # the runner does not have it.\n\
         \x20 VERIFY_MATRIX: cargo-verify-matrix\n\
         \n\
         .verify-matrix:\n\
         \x20 before_script:\n\
         \x20   - |\n\
         \x20     if ! command -v \"$VERIFY_MATRIX\" >/dev/null 2>&1; then\n\
         \x20       curl -fsSL https://raw.githubusercontent.com/verify-matrix/cargo-verify-matrix/main/install.sh | sh\n\
         \x20       export PATH=\"${{CARGO_HOME:-$HOME/.cargo}}/bin:$PATH\"\n\
         \x20     fi\n\
         \n\
         verify-matrix:plan:\n\
         \x20 extends: .verify-matrix\n\
         \x20 stage: verify-matrix-plan\n\
         \x20 image: {image}\n\
         \x20 script:\n\
         \x20   - '\"$VERIFY_MATRIX\" plan'\n\
         \x20   # Until the report job finishes, the status is running: a cancelled pipeline\n\
         \x20   # never leaves the last commit's green standing.\n\
         \x20   - |\n\
         \x20     if [ -n \"$GITLAB_TOKEN\" ]; then\n\
         \x20       \"$VERIFY_MATRIX\" publish --pending --to comment,check-run || echo \"the pending mark was not published\"\n\
         \x20     fi\n",
        image = quoted(linux_image),
    );
    let mut leg_jobs = Vec::new();
    for (runner, envs) in &groups {
        let name = if leg_jobs.is_empty() {
            "verify-matrix:run".to_owned()
        } else {
            format!("verify-matrix:run:{}", envs[0].name)
        };
        let _ = write!(
            out,
            "\n{name}:\n\
             \x20 stage: verify-matrix-run\n"
        );
        if !runner.powershell {
            out.push_str("  extends: .verify-matrix\n");
        }
        if let Some(image) = &runner.image {
            let _ = writeln!(out, "  image: {}", quoted(image));
        }
        if !runner.tags.is_empty() {
            let tags: Vec<String> = runner.tags.iter().map(|t| quoted(t)).collect();
            let _ = writeln!(out, "  tags: [{}]", tags.join(", "));
        }
        out.push_str("  parallel:\n    matrix:\n");
        for env in envs {
            let _ = writeln!(out, "      - VERIFY_MATRIX_ENV: {}", quoted(&env.name));
            if env.shards > 1 {
                let shards: Vec<String> = (1..=env.shards)
                    .map(|k| quoted(&format!("{k}/{}", env.shards)))
                    .collect();
                let _ = writeln!(out, "        VERIFY_MATRIX_SHARD: [{}]", shards.join(", "));
            }
        }
        out.push_str("  script:\n");
        if runner.powershell {
            out.push_str(
                "    - |\n\
                 \x20     if (-not (Get-Command $env:VERIFY_MATRIX -ErrorAction SilentlyContinue)) {\n\
                 \x20       cargo install cargo-verify-matrix --locked --git https://github.com/verify-matrix/cargo-verify-matrix\n\
                 \x20     }\n\
                 \x20     $shard = @()\n\
                 \x20     if ($env:VERIFY_MATRIX_SHARD) { $shard = @('--shard', $env:VERIFY_MATRIX_SHARD) }\n\
                 \x20     & $env:VERIFY_MATRIX run --env $env:VERIFY_MATRIX_ENV @shard\n\
                 \x20     exit $LASTEXITCODE\n",
            );
        } else {
            out.push_str(
                "    - '\"$VERIFY_MATRIX\" run --env \"$VERIFY_MATRIX_ENV\" ${VERIFY_MATRIX_SHARD:+--shard \"$VERIFY_MATRIX_SHARD\"}'\n",
            );
        }
        out.push_str(
            "  artifacts:\n\
             \x20   # A failed leg's results are the point: kept whatever the checks did.\n\
             \x20   when: always\n\
             \x20   paths: [verify-matrix-results/]\n\
             \x20   expire_in: 1 week\n",
        );
        leg_jobs.push(name);
    }
    let needs: Vec<String> = leg_jobs
        .iter()
        .map(|job| format!("    - job: {}\n      artifacts: true\n", quoted(job)))
        .collect();
    let _ = write!(
        out,
        "\nverify-matrix:report:\n\
         \x20 extends: .verify-matrix\n\
         \x20 stage: verify-matrix-report\n\
         \x20 image: {image}\n\
         \x20 # Whatever became of the legs (failed, cancelled, never created): a missing one\n\
         \x20 # is NOT VERIFIED, naming it.\n\
         \x20 when: always\n\
         \x20 needs:\n{needs}\
         \x20 script:\n\
         \x20   - |\n\
         \x20     to=summary\n\
         \x20     if [ -n \"$GITLAB_TOKEN\" ]; then to=comment,check-run,summary; fi\n\
         \x20     set -- --to \"$to\"\n\
         \x20     # A merge request's manifest is held to its target branch's: weakening it\n\
         \x20     # needs the label verify-matrix:allow-weakening.\n\
         \x20     if [ -n \"$CI_MERGE_REQUEST_DIFF_BASE_SHA\" ]; then\n\
         \x20       git fetch --quiet --depth=1 origin \"$CI_MERGE_REQUEST_DIFF_BASE_SHA\" 2>/dev/null || true\n\
         \x20       mkdir -p .verify-matrix-base\n\
         \x20       if git show \"$CI_MERGE_REQUEST_DIFF_BASE_SHA:{manifest}\" > .verify-matrix-base/{base_name} 2>/dev/null; then\n\
         \x20         set -- \"$@\" --base-manifest .verify-matrix-base/{base_name}\n\
         \x20       fi\n\
         \x20     fi\n\
         \x20     case \",$CI_MERGE_REQUEST_LABELS,\" in\n\
         \x20       *,verify-matrix:allow-weakening,*) set -- \"$@\" --allow-weakening ;;\n\
         \x20     esac\n\
         \x20     status=0\n\
         \x20     \"$VERIFY_MATRIX\" report \"$@\" verify-matrix-results || status=$?\n\
         \x20     \"$VERIFY_MATRIX\" render --format junit verify-matrix-report.json > verify-matrix-junit.xml || true\n\
         \x20     exit $status\n\
         \x20 artifacts:\n\
         \x20   when: always\n\
         \x20   paths: [verify-matrix-report.json]\n\
         \x20   reports:\n\
         \x20     # Each check's tests, in GitLab's own merge-request test report too.\n\
         \x20     junit: verify-matrix-junit.xml\n",
        image = quoted(linux_image),
        needs = needs.concat(),
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(
        name: &str,
        runs_on: Option<Value>,
        container: Option<Value>,
        shards: u32,
    ) -> PlanEnvironment {
        PlanEnvironment {
            name: name.to_owned(),
            runs_on,
            container,
            checks: Vec::new(),
            shards,
        }
    }

    #[test]
    fn the_manifests_runners_map_to_images_and_tags() {
        let linux = runner_of(
            &env("l", Some(json!("ubuntu-latest")), None, 1),
            "rust:latest",
        )
        .unwrap();
        assert_eq!(linux.image.as_deref(), Some("rust:latest"));
        assert!(linux.tags.is_empty());
        let container = runner_of(
            &env("c", None, Some(json!({"image": "alpine:3.20"})), 1),
            "rust:latest",
        )
        .unwrap();
        assert_eq!(container.image.as_deref(), Some("alpine:3.20"));
        let mac = runner_of(&env("m", Some(json!("macos-14")), None, 1), "rust:latest").unwrap();
        assert_eq!(mac.tags, [MACOS_TAG]);
        let win = runner_of(
            &env("w", Some(json!("windows-latest")), None, 1),
            "rust:latest",
        )
        .unwrap();
        assert!(win.powershell && win.image.is_none());
        let own = runner_of(
            &env("o", Some(json!(["self-hosted", "arm64", "gpu"])), None, 1),
            "rust:latest",
        )
        .unwrap();
        assert_eq!(own.tags, ["arm64", "gpu"]);
        assert_eq!(own.image, None);
        let runner = |runs_on: Value| runner_of(&env("x", Some(runs_on), None, 1), "rust:latest");
        assert_eq!(
            runner(json!(["macos-14", "xlarge"])).unwrap().tags,
            [MACOS_TAG]
        );
        assert_eq!(runner(json!("ubuntu-24.04-arm")).unwrap().tags, [ARM_TAG]);
        assert_eq!(
            runner(json!(["self-hosted"])).unwrap().tags,
            ["self-hosted"]
        );
        assert!(
            runner(json!(["self-hosted", "windows", "x64"]))
                .unwrap()
                .powershell
        );
    }

    #[test]
    fn what_the_pipeline_cannot_name_is_refused() {
        let image = |image: &str| runner_of(&env("c", None, Some(json!(image)), 1), "rust:latest");
        assert!(image("registry.example.com:5000/team/img@sha256:abc").is_ok());
        for bad in [
            "$CI_JOB_TOKEN@evil.example/x",
            "img\u{7f}",
            "a b",
            "img\u{85}",
            "\"x\"",
            "",
        ] {
            assert!(image(bad).is_err(), "{bad:?}");
        }
        let tag = runner_of(
            &env("t", Some(json!(["self-hosted", "gpu $X"])), None, 1),
            "rust:latest",
        );
        assert!(tag.unwrap_err().contains("gpu $X"));
        let plan = Plan {
            manifest: "verify-matrix.yml".into(),
            digest: String::new(),
            skip: false,
            environments: vec![env("linux", None, None, 1)],
            pairs: Vec::new(),
        };
        for bad in [
            "/tmp/x/verify-matrix.yml",
            "../verify-matrix.yml",
            "odd dir/verify-matrix.yml",
            "a\"b.yml",
            "",
        ] {
            assert!(pipeline(&plan, "rust:latest", bad).is_err(), "{bad:?}");
        }
        let text = pipeline(&plan, "rust:latest", "crates/app/Cargo.toml").unwrap();
        assert!(text.contains("\"$CI_MERGE_REQUEST_DIFF_BASE_SHA:crates/app/Cargo.toml\" > .verify-matrix-base/Cargo.toml"), "{text}");
        assert!(
            text.contains("--base-manifest .verify-matrix-base/Cargo.toml"),
            "{text}"
        );
    }
}
