//! Which commit and workflow run a matrix is about, linked where the values are safe to
//! link.

use super::RenderOptions;
use super::text::short_commit;
use crate::results::Report;
use crate::results::source::is_repository;

/// The commit the report is about and the run that produced it, linked when the
/// repository is known: ``Commit [`abc1234`](…/commit/SHA) · run [#78](…)``.
/// The values come from the results, so only well-formed ones are linked or shown.
pub fn provenance(report: &Report, options: &RenderOptions) -> Option<String> {
    let source = &report.source;
    let commit = source.commit.as_deref().filter(|c| is_commit(c))?;
    let repository = source
        .repository
        .as_deref()
        .filter(|r| is_linkable_repository(r));
    let web = options
        .web
        .as_deref()
        .unwrap_or("https://github.com")
        .trim_end_matches('/');
    let short = short_commit(commit);
    let mut line = match repository {
        Some(repo) if is_link_safe(web) => {
            format!("Commit [`{short}`]({web}/{repo}/commit/{commit})")
        }
        _ => format!("Commit `{short}`"),
    };
    if let Some(run) = source
        .run_id
        .as_deref()
        .filter(|id| !id.is_empty() && id.len() <= 20 && id.bytes().all(|b| b.is_ascii_digit()))
    {
        let url = options
            .link
            .clone()
            .filter(|link| is_link_safe(link))
            .or_else(|| {
                repository
                    .filter(|_| is_link_safe(web))
                    .map(|repo| format!("{web}/{repo}/actions/runs/{run}"))
            });
        match url {
            Some(url) => line.push_str(&format!(" · run [#{run}]({url})")),
            None => line.push_str(&format!(" · run #{run}")),
        }
    }
    Some(line)
}

/// Where files of the verified commit are shown: `{web}/{repo}/blob/{commit}/` and the
/// manifest's folder (test failure locations are relative to it); `None` when the
/// repository or commit is not known or not safe to link.
pub fn blob_base(report: &Report, options: &RenderOptions) -> Option<String> {
    let source = &report.source;
    let commit = source.commit.as_deref().filter(|c| is_commit(c))?;
    let repository = source
        .repository
        .as_deref()
        .filter(|r| is_linkable_repository(r))?;
    let web = options
        .web
        .as_deref()
        .unwrap_or("https://github.com")
        .trim_end_matches('/');
    let folder = super::tests_view::manifest_folder(&report.manifest.path);
    let base = format!("{web}/{repository}/blob/{commit}/{folder}");
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
