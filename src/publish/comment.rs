//! The sticky pull-request comment (DESIGN.md §6).
//!
//! One comment per manifest, found by the hidden marker on its first line and by its
//! author: a comment carrying our marker that someone else wrote is never edited or
//! deleted. Every page of the pull request's comments is read (100 a page). No comment:
//! create it. Ours, with the same body: no write. Ours, changed: one PATCH. Several of
//! ours (left by concurrent runs): the oldest is kept and the others deleted.

use serde_json::{Value, json};

use super::client::{ApiError, GitHub};
use super::context::PrOrigin;

/// The login that writes comments for the workflow's own token.
pub const ACTIONS_BOT: &str = "github-actions[bot]";

/// At most this many pages of comments are read (10,000 comments).
const MAX_PAGES: u32 = 100;
const PER_PAGE: usize = 100;

/// A comment to publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommentPlan {
    /// `owner/name`.
    pub repository: String,
    pub pr: u64,
    /// Where the PR number came from; a number from the results is checked first.
    pub pr_origin: PrOrigin,
    /// The commit the results are about.
    pub head_sha: Option<String>,
    /// The first line of our comment.
    pub marker: String,
    pub body: String,
    /// The login our comments are written by; asked of GitHub when not given.
    pub author: Option<String>,
    /// A pending mark (`body` is the mark): an existing comment's result is kept below
    /// it ([`super::pending::over`]).
    pub pending: bool,
    /// Why no new comment is made (`--comment changes|failures`): an existing one is
    /// still updated.
    pub only_update: Option<String>,
}

/// What publishing the comment did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommentOutcome {
    Created {
        url: String,
        removed: usize,
    },
    Updated {
        url: String,
        removed: usize,
    },
    Unchanged {
        url: String,
        removed: usize,
    },
    /// Nothing posted, and why (not an error: the results are not this PR's).
    Skipped(String),
}

/// One comment as the API lists it.
#[derive(Debug, Clone)]
struct Listed {
    id: u64,
    body: String,
    login: String,
    created_at: String,
    url: String,
}

impl Listed {
    fn from_json(value: &Value) -> Option<Listed> {
        let text = |pointer: &str| {
            value
                .pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        Some(Listed {
            id: value.get("id")?.as_u64()?,
            body: text("/body"),
            login: text("/user/login"),
            created_at: text("/created_at"),
            url: text("/html_url"),
        })
    }
}

/// Publishes `plan`.
pub async fn publish(gh: &GitHub, plan: &CommentPlan) -> Result<CommentOutcome, ApiError> {
    let repo = &plan.repository;
    let pr = plan.pr;
    if let Some(reason) = not_the_head(gh, plan).await? {
        return Ok(CommentOutcome::Skipped(reason));
    }
    let author = match &plan.author {
        Some(login) => login.clone(),
        None => author(gh).await?,
    };
    let found = ours(gh, plan, &author).await?;
    if found.is_empty()
        && let Some(reason) = &plan.only_update
    {
        return Ok(CommentOutcome::Skipped(reason.clone()));
    }
    let Some((kept, duplicates)) = found.split_first() else {
        let author = author.as_str();
        let created = gh
            .create(
                &format!("/repos/{repo}/issues/{pr}/comments"),
                &json!({ "body": plan.body }),
                "creating the PR comment",
                move || async move {
                    // The create may have happened: look before sending it again.
                    Ok(ours(gh, plan, author)
                        .await?
                        .first()
                        .map(|c| json!({ "id": c.id, "html_url": c.url })))
                },
            )
            .await?;
        let url = created
            .get("html_url")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        return Ok(CommentOutcome::Created { url, removed: 0 });
    };
    for duplicate in duplicates {
        gh.delete(
            &format!("/repos/{repo}/issues/comments/{}", duplicate.id),
            "deleting a duplicate PR comment",
        )
        .await?;
    }
    let removed = duplicates.len();
    let body = match (&plan.head_sha, plan.pending) {
        (Some(head), true) => super::pending::over(&plan.body, head, &kept.body),
        _ => plan.body.clone(),
    };
    if same_body(&kept.body, &body) {
        return Ok(CommentOutcome::Unchanged {
            url: kept.url.clone(),
            removed,
        });
    }
    let updated = gh
        .patch(
            &format!("/repos/{repo}/issues/comments/{}", kept.id),
            &json!({ "body": body }),
            "updating the PR comment",
        )
        .await?;
    let url = updated
        .get("html_url")
        .and_then(Value::as_str)
        .map_or_else(|| kept.url.clone(), str::to_owned);
    Ok(CommentOutcome::Updated { url, removed })
}

/// Why the comment must not be written: the PR's head is not the commit this
/// publication is about. A newer push's run owns the comment then, and an older run
/// finishing late (or cancelled, with `if: always()`) must not overwrite it.
///
/// When the PR number came from the results (which the PR's code wrote), the PR must
/// exist and its head must be known and match. A number GitHub or the user gave is
/// checked when the PR can be read.
async fn not_the_head(gh: &GitHub, plan: &CommentPlan) -> Result<Option<String>, ApiError> {
    let pr = plan.pr;
    let from_results = plan.pr_origin == PrOrigin::Results;
    let Some(expected) = &plan.head_sha else {
        return Ok(from_results.then(|| {
            format!("PR #{pr} comes from the results, and there is no commit to check it against")
        }));
    };
    let found = match gh
        .get(
            &format!("/repos/{}/pulls/{pr}", plan.repository),
            "reading the pull request",
        )
        .await
    {
        Ok(found) => found,
        Err(ApiError::Denied { status: 404, .. }) if from_results => {
            return Ok(Some(format!(
                "the results name PR #{pr}, which does not exist in {}",
                plan.repository
            )));
        }
        Err(ApiError::Denied { .. }) if !from_results => return Ok(None),
        Err(e) => return Err(e),
    };
    let head = found
        .pointer("/head/sha")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if head.eq_ignore_ascii_case(expected) || (head.is_empty() && !from_results) {
        return Ok(None);
    }
    let head = if head.is_empty() { "unknown" } else { head };
    Ok(Some(if from_results {
        format!(
            "the results name PR #{pr}, whose head is {head} but the results are for {expected} \
             (a newer push, or results that are not this PR's)"
        )
    } else {
        format!(
            "PR #{pr}'s head is now {head}, not {expected}: a newer push's run writes the comment"
        )
    }))
}

/// The login behind the token. An installation token (the workflow's own) cannot read
/// `/user`; its comments are written by `github-actions[bot]`.
async fn author(gh: &GitHub) -> Result<String, ApiError> {
    match gh.get("/user", "reading the token's user").await {
        Ok(user) => Ok(user
            .get("login")
            .and_then(Value::as_str)
            .unwrap_or(ACTIONS_BOT)
            .to_owned()),
        Err(ApiError::Denied { .. }) => Ok(ACTIONS_BOT.to_owned()),
        Err(e) => Err(e),
    }
}

/// Our comments on the PR, oldest first.
async fn ours(gh: &GitHub, plan: &CommentPlan, author: &str) -> Result<Vec<Listed>, ApiError> {
    let mut ours = Vec::new();
    for page in 1..=MAX_PAGES {
        let listed = gh
            .get(
                &format!(
                    "/repos/{}/issues/{}/comments?per_page={PER_PAGE}&page={page}",
                    plan.repository, plan.pr
                ),
                "listing the PR's comments",
            )
            .await?;
        let items = listed.as_array().map(Vec::as_slice).unwrap_or_default();
        ours.extend(
            items
                .iter()
                .filter_map(Listed::from_json)
                .filter(|c| first_line(&c.body) == plan.marker && c.login == author),
        );
        if items.len() < PER_PAGE {
            break;
        }
    }
    ours.sort_by(|a, b| (&a.created_at, a.id).cmp(&(&b.created_at, b.id)));
    Ok(ours)
}

fn first_line(body: &str) -> &str {
    body.lines().next().unwrap_or_default().trim_end()
}

/// GitHub may store line breaks as CRLF and drop trailing white space.
fn same_body(stored: &str, ours: &str) -> bool {
    let normal = |s: &str| s.replace("\r\n", "\n").trim_end().to_owned();
    normal(stored) == normal(ours)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_compare_across_line_endings_and_trailing_space() {
        assert!(same_body("a\r\nb\r\n", "a\nb\n\n"));
        assert!(!same_body("a\nb", "a\nc"));
        assert_eq!(first_line("<!-- m -->\r\nrest"), "<!-- m -->");
    }
}
