//! Every GitHub Actions variable the tool reads, read in one place and typed, and
//! under GitLab CI GitLab's ([`GitLabEnv`]).
//!
//! The CLI reads the process environment once ([`ActionsEnv::from_process`]) and hands
//! the typed context to the stages: where the run happened (`results::source`), where a
//! publication goes (`publish::context`), which files the job summary and step outputs
//! go to. Tests build one from a map ([`ActionsEnv::from_vars`]). A leaf: it imports no
//! stage.

use std::path::PathBuf;

pub use crate::gitlab_env::GitLabEnv;

/// The GitHub server when `GITHUB_SERVER_URL` is not set.
pub const DEFAULT_SERVER_URL: &str = "https://github.com";

/// The GitHub Actions context of this process. Every field is `None` when its variable
/// is unset or empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActionsEnv {
    /// `GITHUB_ACTIONS=true`: running as a GitHub Actions step.
    pub actions: bool,
    /// `GITHUB_REPOSITORY` (`owner/name`, unchecked).
    pub repository: Option<String>,
    /// `GITHUB_SHA`: on `pull_request` events, a merge commit.
    pub sha: Option<String>,
    /// `GITHUB_EVENT_NAME`.
    pub event_name: Option<String>,
    /// `GITHUB_REF_NAME`: the branch or tag (`N/merge` on a pull request).
    pub ref_name: Option<String>,
    /// `GITHUB_EVENT_PATH`: the event payload.
    pub event_path: Option<PathBuf>,
    /// `GITHUB_RUN_ID`.
    pub run_id: Option<String>,
    /// `GITHUB_RUN_ATTEMPT`, as written.
    pub run_attempt: Option<String>,
    /// `GITHUB_RUN_NUMBER`, as written.
    pub run_number: Option<String>,
    /// `GITHUB_JOB`.
    pub job: Option<String>,
    /// `GITHUB_SERVER_URL`.
    pub server_url: Option<String>,
    /// `GITHUB_API_URL`.
    pub api_url: Option<String>,
    /// `GITHUB_STEP_SUMMARY`: the job summary file.
    pub step_summary: Option<PathBuf>,
    /// `GITHUB_OUTPUT`: the step outputs file.
    pub output: Option<PathBuf>,
    /// `GITHUB_TOKEN`.
    pub token: Option<String>,
    /// `RUNNER_OS`, `RUNNER_ARCH`, `RUNNER_NAME`, `RUNNER_ENVIRONMENT`: what the runner
    /// says of itself.
    pub runner_os: Option<String>,
    pub runner_arch: Option<String>,
    pub runner_name: Option<String>,
    pub runner_environment: Option<String>,
    /// `ImageOS` and `ImageVersion`: a GitHub-hosted runner's image.
    pub image_os: Option<String>,
    pub image_version: Option<String>,
    /// Under GitLab CI (`GITLAB_CI=true`), GitLab's variables.
    pub gitlab: Option<GitLabEnv>,
    /// `CI_API_V4_URL`, read also outside GitLab CI: where `publish --ci gitlab` sends
    /// from a machine of one's own (a self-managed instance).
    pub gitlab_api_url: Option<String>,
    /// `GITLAB_TOKEN`, read also outside GitLab CI: the token `history sync
    /// --from-gitlab` and `publish --ci gitlab` use from a machine of one's own.
    pub gitlab_token: Option<String>,
}

impl ActionsEnv {
    /// The context of this process.
    pub fn from_process() -> ActionsEnv {
        let mut env = ActionsEnv::from_vars(&|name| std::env::var(name).ok());
        // Paths need not be UTF-8.
        let path = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        env.event_path = path("GITHUB_EVENT_PATH");
        env.step_summary = path("GITHUB_STEP_SUMMARY");
        env.output = path("GITHUB_OUTPUT");
        env
    }

    /// The context `var` describes (`var` returns a variable's value).
    pub fn from_vars(var: &dyn Fn(&str) -> Option<String>) -> ActionsEnv {
        let var = |name: &str| var(name).filter(|v| !v.is_empty());
        ActionsEnv {
            actions: var("GITHUB_ACTIONS").as_deref() == Some("true"),
            repository: var("GITHUB_REPOSITORY"),
            sha: var("GITHUB_SHA"),
            event_name: var("GITHUB_EVENT_NAME"),
            ref_name: var("GITHUB_REF_NAME"),
            event_path: var("GITHUB_EVENT_PATH").map(PathBuf::from),
            run_id: var("GITHUB_RUN_ID"),
            run_attempt: var("GITHUB_RUN_ATTEMPT"),
            run_number: var("GITHUB_RUN_NUMBER"),
            job: var("GITHUB_JOB"),
            server_url: var("GITHUB_SERVER_URL"),
            api_url: var("GITHUB_API_URL"),
            step_summary: var("GITHUB_STEP_SUMMARY").map(PathBuf::from),
            output: var("GITHUB_OUTPUT").map(PathBuf::from),
            token: var("GITHUB_TOKEN"),
            runner_os: var("RUNNER_OS"),
            runner_arch: var("RUNNER_ARCH"),
            runner_name: var("RUNNER_NAME"),
            runner_environment: var("RUNNER_ENVIRONMENT"),
            image_os: var("ImageOS"),
            image_version: var("ImageVersion"),
            gitlab: GitLabEnv::from_vars(&var),
            gitlab_api_url: var("CI_API_V4_URL"),
            gitlab_token: var("GITLAB_TOKEN"),
        }
    }

    /// The token to send GitLab and its header: `flag` (`--token`), else GitLab CI's
    /// ([`GitLabEnv::credentials`]), else GITLAB_TOKEN on a machine of one's own.
    pub fn gitlab_credentials(&self, flag: Option<&str>) -> Option<(String, &'static str)> {
        flag.map(|t| (t.to_owned(), "PRIVATE-TOKEN"))
            .or_else(|| self.gitlab.as_ref()?.credentials())
            .or_else(|| Some((self.gitlab_token.clone()?, "PRIVATE-TOKEN")))
    }

    /// Under GitHub Actions, the workflow run and attempt this process is part of.
    pub fn this_run(&self) -> Option<(String, u32)> {
        if !self.actions {
            return None;
        }
        Some((
            self.run_id.clone()?,
            self.run_attempt.as_ref()?.parse().ok()?,
        ))
    }

    /// Under GitHub Actions, the page of this workflow run; under GitLab CI, this
    /// pipeline's (`CI_PIPELINE_URL`).
    pub fn run_url(&self) -> Option<String> {
        if !self.actions {
            return self.gitlab.as_ref()?.pipeline_url.clone();
        }
        let server = self.server_url.as_deref().unwrap_or(DEFAULT_SERVER_URL);
        Some(format!(
            "{}/{}/actions/runs/{}",
            server.trim_end_matches('/'),
            self.repository.as_ref()?,
            self.run_id.as_ref()?
        ))
    }

    /// Under GitHub Actions, the step outputs file.
    pub fn output_file(&self) -> Option<&PathBuf> {
        self.output.as_ref().filter(|_| self.actions)
    }

    /// The event payload, when there is one and it is JSON.
    pub fn event_payload(&self) -> Option<serde_json::Value> {
        let bytes = std::fs::read(self.event_path.as_ref()?).ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> ActionsEnv {
        ActionsEnv::from_vars(&|name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn empty_variables_are_unset() {
        let e = env(&[("GITHUB_REPOSITORY", ""), ("GITHUB_ACTIONS", "true")]);
        assert!(e.actions);
        assert_eq!(e.repository, None);
    }

    #[test]
    fn the_run_and_its_page_only_under_actions() {
        let vars = [
            ("GITHUB_REPOSITORY", "o/r"),
            ("GITHUB_RUN_ID", "42"),
            ("GITHUB_RUN_ATTEMPT", "2"),
            ("GITHUB_OUTPUT", "/tmp/out"),
        ];
        let outside = env(&vars);
        assert_eq!(outside.this_run(), None);
        assert_eq!(outside.run_url(), None);
        assert_eq!(outside.output_file(), None);
        let mut inside = vars.to_vec();
        inside.push(("GITHUB_ACTIONS", "true"));
        inside.push(("GITHUB_SERVER_URL", "https://ghe.example/"));
        let inside = env(&inside);
        assert_eq!(inside.this_run(), Some(("42".to_owned(), 2)));
        assert_eq!(
            inside.run_url().as_deref(),
            Some("https://ghe.example/o/r/actions/runs/42")
        );
        assert_eq!(inside.output_file(), Some(&PathBuf::from("/tmp/out")));
    }
}
