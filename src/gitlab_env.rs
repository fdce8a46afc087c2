//! Every GitLab CI variable the tool reads, read in one place and typed: the job, its
//! runner and pipeline (which `run` records), and the merge request and API a
//! publication goes to. A leaf, like [`crate::actions_env`], which carries it.

/// GitLab's API when `CI_API_V4_URL` is not set.
pub const DEFAULT_API_URL: &str = "https://gitlab.com/api/v4";

/// The GitLab CI context of this process (`GITLAB_CI=true`). Every field is `None` when
/// its variable is unset or empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitLabEnv {
    /// `CI_SERVER_URL` (`https://gitlab.com`).
    pub server_url: Option<String>,
    /// `CI_API_V4_URL` (`https://gitlab.com/api/v4`).
    pub api_url: Option<String>,
    /// `CI_PROJECT_ID`: the project the pipeline runs in.
    pub project_id: Option<String>,
    /// `CI_PROJECT_PATH` (`group/subgroup/project`).
    pub project_path: Option<String>,
    /// `CI_PIPELINE_ID`.
    pub pipeline_id: Option<String>,
    /// `CI_PIPELINE_URL`.
    pub pipeline_url: Option<String>,
    /// `CI_PIPELINE_SOURCE`: `push`, `merge_request_event`, `schedule`, …
    pub pipeline_source: Option<String>,
    /// `CI_JOB_ID`.
    pub job_id: Option<String>,
    /// `CI_JOB_NAME` (a matrix job's is `leg: [linux, 1]`).
    pub job_name: Option<String>,
    /// `CI_JOB_URL`.
    pub job_url: Option<String>,
    /// `CI_JOB_IMAGE`: the image the job runs in (none under the shell executor).
    pub job_image: Option<String>,
    /// `CI_RUNNER_ID`.
    pub runner_id: Option<String>,
    /// `CI_RUNNER_TAGS`, as written (a JSON array of strings).
    pub runner_tags: Option<String>,
    /// `CI_RUNNER_DESCRIPTION`.
    pub runner_description: Option<String>,
    /// `CI_COMMIT_SHA`: in a merged-results pipeline, the merge commit.
    pub commit_sha: Option<String>,
    /// `CI_COMMIT_REF_NAME`: the branch or tag.
    pub ref_name: Option<String>,
    /// `CI_MERGE_REQUEST_IID`: the merge request, in merge-request pipelines.
    pub mr_iid: Option<String>,
    /// `CI_MERGE_REQUEST_PROJECT_ID`: the project the merge request belongs to.
    pub mr_project_id: Option<String>,
    /// `CI_MERGE_REQUEST_SOURCE_BRANCH_SHA`: the merge request's head, in merged-results
    /// pipelines.
    pub mr_source_sha: Option<String>,
    /// `CI_MERGE_REQUEST_EVENT_TYPE`: `detached`, `merged_result` or `merge_train`.
    pub mr_event_type: Option<String>,
    /// `GITLAB_TOKEN`: a project, group or personal access token (scope `api`).
    pub token: Option<String>,
    /// `CI_JOB_TOKEN`: the job's own token, which reads but cannot post notes.
    pub job_token: Option<String>,
}

impl GitLabEnv {
    /// The context `var` describes, when `GITLAB_CI` is `true`.
    pub fn from_vars(var: &dyn Fn(&str) -> Option<String>) -> Option<GitLabEnv> {
        let var = |name: &str| var(name).filter(|v| !v.is_empty());
        if var("GITLAB_CI").as_deref() != Some("true") {
            return None;
        }
        Some(GitLabEnv {
            server_url: var("CI_SERVER_URL"),
            api_url: var("CI_API_V4_URL"),
            project_id: var("CI_PROJECT_ID"),
            project_path: var("CI_PROJECT_PATH"),
            pipeline_id: var("CI_PIPELINE_ID"),
            pipeline_url: var("CI_PIPELINE_URL"),
            pipeline_source: var("CI_PIPELINE_SOURCE"),
            job_id: var("CI_JOB_ID"),
            job_name: var("CI_JOB_NAME"),
            job_url: var("CI_JOB_URL"),
            job_image: var("CI_JOB_IMAGE"),
            runner_id: var("CI_RUNNER_ID"),
            runner_tags: var("CI_RUNNER_TAGS"),
            runner_description: var("CI_RUNNER_DESCRIPTION"),
            commit_sha: var("CI_COMMIT_SHA"),
            ref_name: var("CI_COMMIT_REF_NAME"),
            mr_iid: var("CI_MERGE_REQUEST_IID"),
            mr_project_id: var("CI_MERGE_REQUEST_PROJECT_ID"),
            mr_source_sha: var("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"),
            mr_event_type: var("CI_MERGE_REQUEST_EVENT_TYPE"),
            token: var("GITLAB_TOKEN"),
            job_token: var("CI_JOB_TOKEN"),
        })
    }

    /// The commit the pipeline verifies: a merge request's head in a merged-results
    /// pipeline (whose `CI_COMMIT_SHA` is a merge commit), else `CI_COMMIT_SHA` — in a
    /// merge train's pipeline too, whose commit is the train's (the merge request
    /// merged with those ahead of it), which is what decides whether it merges.
    pub fn head_sha(&self) -> Option<&str> {
        if self.merge_train() {
            return self.commit_sha.as_deref();
        }
        self.mr_source_sha.as_deref().or(self.commit_sha.as_deref())
    }

    /// The token to send GitLab and its header: GITLAB_TOKEN (an access token, sent as
    /// `PRIVATE-TOKEN`), else the job's own (`JOB-TOKEN`).
    pub fn credentials(&self) -> Option<(String, &'static str)> {
        match (&self.token, &self.job_token) {
            (Some(token), _) => Some((token.clone(), "PRIVATE-TOKEN")),
            (None, Some(token)) => Some((token.clone(), "JOB-TOKEN")),
            (None, None) => None,
        }
    }

    /// Whether this is a merge train's pipeline.
    pub fn merge_train(&self) -> bool {
        self.mr_event_type.as_deref() == Some("merge_train")
    }

    /// The merge request's number, when it is one.
    pub fn mr(&self) -> Option<u64> {
        self.mr_iid.as_deref()?.parse().ok()
    }

    /// `CI_RUNNER_TAGS` as a list: GitLab writes a JSON array (`["linux", "docker"]`);
    /// older runners a comma-separated list.
    pub fn runner_tags(&self) -> Vec<String> {
        let Some(raw) = self.runner_tags.as_deref() else {
            return Vec::new();
        };
        match serde_json::from_str::<Vec<String>>(raw) {
            Ok(tags) => tags,
            Err(_) => raw
                .split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> Option<GitLabEnv> {
        GitLabEnv::from_vars(&|name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn only_under_gitlab_ci() {
        assert_eq!(env(&[("CI_JOB_ID", "7")]), None);
        assert_eq!(env(&[("GITLAB_CI", "false"), ("CI_JOB_ID", "7")]), None);
        let e = env(&[
            ("GITLAB_CI", "true"),
            ("CI_JOB_ID", "7"),
            ("CI_JOB_NAME", ""),
        ])
        .unwrap();
        assert_eq!(e.job_id.as_deref(), Some("7"));
        assert_eq!(e.job_name, None);
    }

    #[test]
    fn a_merged_results_pipeline_verifies_the_merge_requests_head() {
        let head = "0123456789abcdef0123456789abcdef01234567";
        let merge = "fedcba9876543210fedcba9876543210fedcba98";
        let e = env(&[
            ("GITLAB_CI", "true"),
            ("CI_COMMIT_SHA", merge),
            ("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA", head),
            ("CI_MERGE_REQUEST_IID", "12"),
        ])
        .unwrap();
        assert_eq!(e.head_sha(), Some(head));
        assert_eq!(e.mr(), Some(12));
        let e = env(&[("GITLAB_CI", "true"), ("CI_COMMIT_SHA", merge)]).unwrap();
        assert_eq!(e.head_sha(), Some(merge));
        assert_eq!(e.mr(), None);
    }

    #[test]
    fn runner_tags_as_json_or_a_list() {
        let tags = |raw| {
            env(&[("GITLAB_CI", "true"), ("CI_RUNNER_TAGS", raw)])
                .unwrap()
                .runner_tags()
        };
        assert_eq!(tags(r#"["linux", "docker"]"#), ["linux", "docker"]);
        assert_eq!(tags("linux, docker"), ["linux", "docker"]);
    }
}
