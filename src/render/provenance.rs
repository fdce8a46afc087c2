//! Which commit and workflow run a matrix is about, linked where the values are safe to
//! link.

use super::RenderOptions;
use super::text::short_commit;
use crate::results::Report;
use crate::results::source::is_repository;

/// The commit a report is about and the run that produced it, each with its link when
/// safe: what [`provenance`] and [`provenance_html`] write.
struct Parts {
    /// The commit as people read it (7 characters), and its page.
    commit: (String, Option<String>),
    /// `#128` (the run's number) or `id 9000002`, and its page.
    run: Option<(String, Option<String>)>,
    /// The attempt, when the run was re-run.
    attempt: Option<u32>,
}

fn parts(report: &Report, options: &RenderOptions) -> Option<Parts> {
    let source = &report.source;
    let commit = source.commit.as_deref().filter(|c| is_commit(c))?;
    let commit_url = repository(report)
        .and_then(|repo| forge_commit_page(options.forge, web(options), repo, commit));
    // People know a run by its number (`#128`); the id only names it in links.
    let run = run_id(report).map(|id| {
        let label = match source.run_number {
            Some(number) => format!("#{number}"),
            None => format!("id {id}"),
        };
        (label, run_url(report, options))
    });
    Some(Parts {
        commit: (short_commit(commit).to_owned(), commit_url),
        run,
        attempt: source.run_attempt.filter(|a| *a > 1),
    })
}

/// The commit the report is about and the run that produced it, linked when the
/// repository is known: ``Commit [`abc1234`](…/commit/SHA) · run [#78](…), attempt 2``
/// (the run's number when the results record it, else its id).
/// The values come from the results, so only well-formed ones are linked or shown.
pub fn provenance(report: &Report, options: &RenderOptions) -> Option<String> {
    let parts = parts(report, options)?;
    let mut line = match &parts.commit {
        (short, Some(url)) => format!("Commit [`{short}`]({url})"),
        (short, None) => format!("Commit `{short}`"),
    };
    match &parts.run {
        Some((label, Some(url))) => line.push_str(&format!(" · run [{label}]({url})")),
        Some((label, None)) => line.push_str(&format!(" · run {label}")),
        None => {}
    }
    if let Some(attempt) = parts.attempt {
        line.push_str(&format!(", attempt {attempt}"));
    }
    Some(line)
}

/// [`provenance`] as HTML, with when the run finished (`finished_at`) when known:
/// `Commit <a>abc1234</a> · run <a>#78</a> · finished 2026-11-26 10:01:02 UTC`.
pub fn provenance_html(report: &Report, options: &RenderOptions) -> Option<String> {
    use super::text::escape_html as esc;
    let link = |text: &str, url: &Option<String>| match url {
        Some(url) => format!("<a href=\"{}\">{}</a>", esc(url), esc(text)),
        None => esc(text),
    };
    let parts = parts(report, options);
    let mut items = Vec::new();
    if let Some(parts) = &parts {
        items.push(format!(
            "Commit <code>{}</code>",
            link(&parts.commit.0, &parts.commit.1)
        ));
        if let Some((label, url)) = &parts.run {
            let mut run = format!("run {}", link(label, url));
            if let Some(attempt) = parts.attempt {
                run.push_str(&format!(", attempt {attempt}"));
            }
            items.push(run);
        }
    }
    if let Some(at) = report
        .finished_at
        .as_deref()
        .filter(|t| crate::results::source::is_rfc3339_utc(t))
    {
        items.push(format!(
            "finished {} UTC",
            esc(&at.trim_end_matches('Z').replacen('T', " ", 1))
        ));
    }
    (!items.is_empty()).then(|| items.join(" · "))
}

/// The workflow run the results came from, as a link: its page under the repository,
/// else `options.link` when that is the same run (a link ending in its id) or the
/// results name no run. Never another run's page: the `workflow_run` recipe publishes
/// from a run that is not the one verified.
pub fn run_url(report: &Report, options: &RenderOptions) -> Option<String> {
    let run = run_id(report);
    let own = run
        .zip(repository(report))
        .and_then(|(id, repo)| forge_run_page(options.forge, web(options), repo, id));
    own.or_else(|| {
        options
            .link
            .clone()
            .filter(|link| is_link_safe(link))
            .filter(|link| {
                run.is_none_or(|id| {
                    let link = link.trim_end_matches('/');
                    link.strip_suffix(id)
                        .is_some_and(|rest| rest.ends_with('/'))
                })
            })
    })
}

/// The results' run id, when well-formed.
fn run_id(report: &Report) -> Option<&str> {
    report.source.run_id.as_deref().filter(|id| is_run_id(id))
}

/// Whose web pages links go to: GitHub's (`/commit/…`, `/actions/runs/…`) or GitLab's
/// (`/-/commit/…`, `/-/pipelines/…`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Forge {
    #[default]
    GitHub,
    GitLab,
}

impl Forge {
    fn default_web(self) -> &'static str {
        match self {
            Forge::GitHub => "https://github.com",
            Forge::GitLab => "https://gitlab.com",
        }
    }

    fn runs(self) -> &'static str {
        match self {
            Forge::GitHub => "actions/runs",
            Forge::GitLab => "-/pipelines",
        }
    }

    fn commit(self) -> &'static str {
        match self {
            Forge::GitHub => "commit",
            Forge::GitLab => "-/commit",
        }
    }

    fn blob(self) -> &'static str {
        match self {
            Forge::GitHub => "blob",
            Forge::GitLab => "-/blob",
        }
    }
}

/// A workflow run's id: 1 to 20 digits.
fn is_run_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 20 && id.bytes().all(|b| b.is_ascii_digit())
}

/// A workflow run's page, `{web}/{repository}/actions/runs/{id}` (`web` without its
/// trailing slash), when the repository and the id are well-formed — they come from
/// results — and the link is safe.
pub fn run_page(web: &str, repository: &str, id: &str) -> Option<String> {
    forge_run_page(Forge::GitHub, web, repository, id)
}

/// [`run_page`] on `forge`'s pages (a GitLab pipeline's: `{web}/{repository}/-/pipelines/{id}`).
pub fn forge_run_page(forge: Forge, web: &str, repository: &str, id: &str) -> Option<String> {
    if !is_linkable_repository(repository) || !is_run_id(id) {
        return None;
    }
    let url = format!("{web}/{repository}/{}/{id}", forge.runs());
    is_link_safe(&url).then_some(url)
}

/// A commit's page, `{web}/{repository}/commit/{commit}`, when the repository and the
/// commit are well-formed and the link is safe.
pub fn commit_page(web: &str, repository: &str, commit: &str) -> Option<String> {
    forge_commit_page(Forge::GitHub, web, repository, commit)
}

/// [`commit_page`] on `forge`'s pages.
pub fn forge_commit_page(
    forge: Forge,
    web: &str,
    repository: &str,
    commit: &str,
) -> Option<String> {
    if !is_linkable_repository(repository) || !is_commit(commit) {
        return None;
    }
    let url = format!("{web}/{repository}/{}/{commit}", forge.commit());
    is_link_safe(&url).then_some(url)
}

/// The results' repository, when it can be linked.
fn repository(report: &Report) -> Option<&str> {
    report
        .source
        .repository
        .as_deref()
        .filter(|r| is_linkable_repository(r))
}

/// The web root, without its trailing slash.
fn web(options: &RenderOptions) -> &str {
    options
        .web
        .as_deref()
        .unwrap_or(options.forge.default_web())
        .trim_end_matches('/')
}

/// Where files of the verified commit are shown: `{web}/{repo}/blob/{commit}/` and the
/// manifest's folder (test failure locations are relative to it); `None` when the
/// repository or commit is not known or not safe to link.
pub fn blob_base(report: &Report, options: &RenderOptions) -> Option<String> {
    let source = &report.source;
    let commit = source.commit.as_deref().filter(|c| is_commit(c))?;
    let repository = repository(report)?;
    let web = web(options);
    let folder = super::tests_view::manifest_folder(&report.manifest.path);
    let base = format!(
        "{web}/{repository}/{}/{commit}/{folder}",
        options.forge.blob()
    );
    is_link_safe(&base).then_some(base)
}

/// A commit id, full or abbreviated: 7 to 64 hex digits.
pub fn is_commit(text: &str) -> bool {
    (7..=64).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `owner/name` as GitHub allows them.
/// A repository that can be linked: well-formed, each part at most 100 characters (it
/// comes from the results).
fn is_linkable_repository(text: &str) -> bool {
    is_repository(text) && text.split('/').all(|part| part.len() <= 100)
}

/// A URL that can stand in a markdown link without ending it early.
pub fn is_link_safe(url: &str) -> bool {
    (url.starts_with("https://") || url.starts_with("http://"))
        && url.len() <= 2000
        && !url.chars().any(|c| {
            c.is_whitespace()
                || c.is_control()
                || matches!(c, '(' | ')' | '<' | '>' | '[' | ']' | '`' | '"')
        })
}
