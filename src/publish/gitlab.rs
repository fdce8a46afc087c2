//! Publishing to GitLab (docs/gitlab-ci.md): the sticky merge-request note, the commit
//! status "Environment Verification Matrix", and the matrix in the job's log.
//!
//! The same plan-then-apply shape as GitHub's: [`plan`] makes the requests as data
//! (`--dry-run` prints them), [`GitLabPublication::send`] carries them out through the
//! same client and retry rules.
//!
//! - The note is found as the GitHub comment is: its first line is our marker and its
//!   author is the token's user (`GET /user`, or `--comment-author`; a token that
//!   cannot say whose it is writes nothing). Every page of the merge request's notes is read, oldest first.
//!   None: `POST`; ours with the same body: nothing; changed: `PUT`; several: the
//!   oldest is kept and the others deleted.
//! - The merge request's head (`sha`) must be the commit the results are about: an
//!   older pipeline finishing late never overwrites a newer one's note.
//! - The status is `running` for a pending mark (posting `running` again is no change:
//!   GitLab answers "Cannot transition status via :run from :running"), then `success`
//!   or `failed`. Its description is cut to GitLab's 255 characters.
//! - GitLab runs a note's quick actions (`/merge`, `/approve`, …) from any line that
//!   begins with `/`: every such line of the body is made inert.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::client::{ApiError, GitHub};
use super::{CommentMode, PublishError, Settings, Target, pending, within};
use crate::actions_env::GitLabEnv;
use crate::gitlab_env::DEFAULT_API_URL;
use crate::render::text::{plural, short_commit};
use crate::render::{Quoted, RenderOptions, Tails, markdown, table};
use crate::results::{Report, Verdict};

/// GitLab's limit on a note's body, in characters.
pub const NOTE_LIMIT: usize = 1_000_000;

/// GitLab's limit on a status's description and target URL, in characters.
const STATUS_TEXT_LIMIT: usize = 255;

/// At most this many pages of notes are read (10,000 notes).
const MAX_PAGES: u32 = 100;
const PER_PAGE: usize = 100;

/// Where a publication to GitLab goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitLabContext {
    /// The API root, without a trailing slash (`CI_API_V4_URL`).
    pub api_url: String,
    /// The project the pipeline runs in (`CI_PROJECT_ID`, `--repo`): the status's.
    pub project: Option<String>,
    /// The merge request's project (`CI_MERGE_REQUEST_PROJECT_ID`: for a fork's merge
    /// request, the parent), and its number.
    pub mr: Option<(String, u64)>,
    /// The commit the results are about.
    pub head_sha: Option<String>,
    /// `CI_PIPELINE_ID`: the pipeline the status belongs to.
    pub pipeline_id: Option<u64>,
    /// `CI_COMMIT_REF_NAME`.
    pub ref_name: Option<String>,
    /// `CI_PIPELINE_URL`: where the status links to.
    pub target_url: Option<String>,
    /// A merge train's pipeline: it verifies the train's commit, not the merge
    /// request's head, so it writes no note.
    pub merge_train: bool,
}

impl GitLabContext {
    /// Works out the target from GitLab's variables (`env`, when under GitLab CI; else
    /// `api_url`, `CI_API_V4_URL` as set by hand), the report and the command line
    /// (`--repo`, `--pr`, `--sha`).
    pub fn resolve(
        env: Option<&GitLabEnv>,
        api_url: Option<&str>,
        report: &Report,
        overrides: &super::Overrides,
    ) -> Result<GitLabContext, super::ContextError> {
        use super::ContextError::Invalid;
        let project = overrides
            .repository
            .clone()
            .or_else(|| env.and_then(|e| e.project_id.clone()))
            .or_else(|| env.and_then(|e| e.project_path.clone()));
        if let Some(project) = &project {
            check_project(project)?;
        }
        let iid = overrides.pr.or_else(|| env.and_then(GitLabEnv::mr));
        let mr_project = env
            .and_then(|e| e.mr_project_id.clone())
            .filter(|_| overrides.repository.is_none())
            .or_else(|| project.clone());
        if let Some(mr_project) = &mr_project {
            check_project(mr_project)?;
        }
        let head_sha = overrides
            .sha
            .clone()
            .or_else(|| env.and_then(|e| e.head_sha().map(str::to_owned)))
            .or_else(|| report.source.commit.clone());
        if let Some(sha) = &head_sha {
            if !(matches!(sha.len(), 40 | 64) && sha.bytes().all(|b| b.is_ascii_hexdigit())) {
                return Err(Invalid(format!(
                    "`{sha}` is not a commit id (40 or 64 hex digits)"
                )));
            }
            if let Some(recorded) = &report.source.commit
                && !recorded.eq_ignore_ascii_case(sha)
            {
                return Err(Invalid(format!(
                    "the results are for commit {recorded}, but this publication is for commit {sha}; \
                     publishing them there would report on code that was not verified"
                )));
            }
        }
        let api_url = env
            .and_then(|e| e.api_url.as_deref())
            .or(api_url)
            .unwrap_or(DEFAULT_API_URL);
        Ok(GitLabContext {
            api_url: api_url.trim_end_matches('/').to_owned(),
            project,
            mr: mr_project.zip(iid),
            head_sha,
            pipeline_id: env
                .and_then(|e| e.pipeline_id.as_deref())
                .and_then(|id| id.parse().ok()),
            ref_name: env.and_then(|e| e.ref_name.clone()),
            target_url: env.and_then(|e| e.pipeline_url.clone()),
            merge_train: env.is_some_and(GitLabEnv::merge_train) && overrides.sha.is_none(),
        })
    }

    fn require_project(&self) -> Result<&str, PublishError> {
        self.project.as_deref().ok_or_else(|| {
            PublishError::Context(super::ContextError::Missing(
                "no project to publish to: set CI_PROJECT_ID (GitLab sets it in a job) or pass --repo ID-OR-PATH"
                    .to_owned(),
            ))
        })
    }
}

/// A project as GitLab's paths take it: a number, or `group/…/name` in the characters
/// GitLab allows (never `.` or `..`), which goes into request paths encoded.
pub(crate) fn check_project(project: &str) -> Result<(), super::ContextError> {
    let part_ok = |part: &str| {
        !part.is_empty()
            && part != "."
            && part != ".."
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    let numeric = !project.is_empty() && project.bytes().all(|b| b.is_ascii_digit());
    let path = project.contains('/') && project.split('/').all(part_ok);
    if numeric || path {
        Ok(())
    } else {
        Err(super::ContextError::Invalid(format!(
            "`{project}` is not a GitLab project (its number, or GROUP/NAME)"
        )))
    }
}

/// A project in a request path: its number, or its path with `/` encoded.
pub(crate) fn project_path(project: &str) -> String {
    project.replace('/', "%2F")
}

/// The sticky note to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotePlan {
    pub project: String,
    pub mr: u64,
    /// The commit the results are about: the merge request's head must be it.
    pub head_sha: Option<String>,
    /// The first line of our note.
    pub marker: String,
    pub body: String,
    /// The user our notes are written by (`--comment-author`); asked of GitLab when
    /// not given.
    pub author: Option<String>,
    /// A pending mark (`body` is the mark): an existing note's result is kept below it.
    pub pending: bool,
    /// Why no new note is made (`--comment changes|failures`); an existing one is
    /// still updated.
    pub only_update: Option<String>,
}

/// The commit status to set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusPlan {
    pub project: String,
    pub sha: String,
    /// `running`, `success` or `failed`.
    pub state: &'static str,
    pub name: String,
    pub description: String,
    pub target_url: Option<String>,
    pub pipeline_id: Option<u64>,
    pub ref_name: Option<String>,
}

impl StatusPlan {
    /// The request: `POST /projects/:id/statuses/:sha` and its body.
    pub fn request(&self) -> (String, Value) {
        let mut body = json!({
            "state": self.state,
            "name": self.name,
            "description": self.description,
        });
        if let Some(url) = self
            .target_url
            .as_ref()
            .filter(|u| u.chars().count() <= STATUS_TEXT_LIMIT)
        {
            body["target_url"] = json!(url);
        }
        if let Some(id) = self.pipeline_id {
            body["pipeline_id"] = json!(id);
        }
        if let Some(name) = &self.ref_name {
            body["ref"] = json!(name);
        }
        (
            format!(
                "/projects/{}/statuses/{}",
                project_path(&self.project),
                self.sha
            ),
            body,
        )
    }
}

/// Everything one publication to GitLab writes.
#[derive(Debug, Clone, PartialEq)]
pub struct GitLabPublication {
    /// The matrix for the job's log (the `summary` target: GitLab has no job summary).
    pub log: Option<String>,
    pub note: Option<NotePlan>,
    pub status: Option<StatusPlan>,
    /// Targets asked for that do not apply here, and why.
    pub notes: Vec<String>,
}

/// Plans publishing `report` to GitLab: `comment` is the merge request's note,
/// `check-run` the commit status, `summary` the matrix in the job's log.
pub fn plan(
    report: &Quoted,
    settings: &Settings,
    options: &RenderOptions,
    context: &GitLabContext,
) -> Result<GitLabPublication, PublishError> {
    let mut publication = GitLabPublication {
        log: None,
        note: None,
        status: None,
        notes: Vec::new(),
    };
    let wants = |target| settings.targets.contains(&target);
    if wants(Target::Summary) {
        publication.log = Some(job_log(report));
    }
    let tails = Tails::load(report, options, Tails::SHORT);
    if wants(Target::Comment) {
        let body = |limit| within(report, &tails, options, None, Some(limit));
        note_plan(
            &mut publication,
            report,
            settings,
            options,
            context,
            body,
            false,
        )?;
    }
    if wants(Target::CheckRun) {
        let state = match report.verdict {
            Verdict::Verified => "success",
            _ => "failed",
        };
        let description = cut(&crate::publish::check_run::title(report), STATUS_TEXT_LIMIT);
        publication.status = Some(status_plan(
            settings,
            options,
            context,
            require_sha(context)?,
            state,
            description,
        )?);
    }
    Ok(publication)
}

/// Plans the pending mark: the status `running` and the pending note.
pub fn plan_pending(
    report: &Quoted,
    settings: &Settings,
    options: &RenderOptions,
    context: &GitLabContext,
) -> Result<GitLabPublication, PublishError> {
    let head = require_sha(context)?;
    let provenance = markdown::provenance(report, options);
    let banner = pending::banner(
        &markdown::marker(&options.key),
        &head,
        provenance.as_deref(),
    );
    let mut publication = GitLabPublication {
        log: None,
        note: None,
        status: None,
        notes: Vec::new(),
    };
    let wants = |target| settings.targets.contains(&target);
    if wants(Target::Summary) {
        publication
            .notes
            .push("no job log summary for a pending mark: the report writes it".to_owned());
    }
    if wants(Target::Comment) {
        let body = |_| Ok::<_, PublishError>(banner.clone());
        note_plan(
            &mut publication,
            report,
            settings,
            options,
            context,
            body,
            true,
        )?;
    }
    if wants(Target::CheckRun) {
        let description = format!("Verifying {}: no verdict yet", short_commit(&head));
        publication.status = Some(status_plan(
            settings,
            options,
            context,
            head.clone(),
            "running",
            description,
        )?);
    }
    Ok(publication)
}

/// The commit status `state` on `sha`, in the context's project and pipeline, linking
/// to `--link` or the pipeline.
fn status_plan(
    settings: &Settings,
    options: &RenderOptions,
    context: &GitLabContext,
    sha: String,
    state: &'static str,
    description: String,
) -> Result<StatusPlan, PublishError> {
    Ok(StatusPlan {
        project: context.require_project()?.to_owned(),
        sha,
        state,
        name: settings.check_name.clone(),
        description,
        target_url: options.link.clone().or_else(|| context.target_url.clone()),
        pipeline_id: context.pipeline_id,
        ref_name: context.ref_name.clone(),
    })
}

fn note_plan<E>(
    publication: &mut GitLabPublication,
    report: &Report,
    settings: &Settings,
    options: &RenderOptions,
    context: &GitLabContext,
    body: impl Fn(usize) -> Result<String, E>,
    pending: bool,
) -> Result<(), PublishError>
where
    PublishError: From<E>,
{
    if settings.comment_mode == CommentMode::Off {
        publication
            .notes
            .push("no merge-request note: --comment off".to_owned());
        return Ok(());
    }
    if context.merge_train {
        publication.notes.push(
            "no merge-request note: a merge train's pipeline verifies the train's commit (the merge request merged with those ahead of it), not the merge request's head; the commit status is on the train's commit"
                .to_owned(),
        );
        return Ok(());
    }
    let Some((project, mr)) = &context.mr else {
        publication.notes.push(
            "no merge-request note: this is not a merge-request pipeline (no CI_MERGE_REQUEST_IID); pass --pr N to name one"
                .to_owned(),
        );
        return Ok(());
    };
    let text = fitted(body)?;
    publication.note = Some(NotePlan {
        project: project.clone(),
        mr: *mr,
        head_sha: context.head_sha.clone(),
        marker: markdown::marker(&options.key),
        body: text,
        author: settings.comment_author.clone(),
        pending,
        only_update: settings
            .comment_mode
            .holds_back((!pending).then_some(report)),
    });
    Ok(())
}

/// The body `body` renders within a limit, made inert and within [`NOTE_LIMIT`]: made
/// inert, a body is longer than rendered, so it is rendered again with less room until
/// it fits (or, after a few tries, has none).
fn fitted<E>(body: impl Fn(usize) -> Result<String, E>) -> Result<String, E> {
    let mut limit = NOTE_LIMIT;
    let mut text = inert_for_gitlab(&body(limit)?);
    for _ in 0..8 {
        let chars = text.chars().count();
        if chars <= NOTE_LIMIT {
            break;
        }
        limit = limit.saturating_sub(chars - NOTE_LIMIT + 1024);
        text = inert_for_gitlab(&body(limit)?);
    }
    Ok(text)
}

fn require_sha(context: &GitLabContext) -> Result<String, PublishError> {
    context.head_sha.clone().ok_or_else(|| {
        PublishError::Unplaceable(
            "no commit for the status: the results record none and CI_COMMIT_SHA is not set; pass --sha"
                .to_owned(),
        )
    })
}

/// The matrix for the job's log, in a collapsed section (GitLab's
/// `section_start`/`section_end` lines) after the verdict.
fn job_log(report: &Quoted) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\x1b[0Ksection_start:{now}:verify_matrix[collapsed=false]\r\x1b[0KEnvironment Verification Matrix"
    );
    out.push_str(&table::render(report, false));
    if !out.ends_with('\n') {
        out.push('\n');
    }
    let _ = writeln!(out, "\x1b[0Ksection_end:{now}:verify_matrix\r\x1b[0K");
    out
}

/// `body` made inert for GitLab: its quick actions ([`inert_quick_actions`]) and, outside
/// code, its references: a zero-width space after the `@` of a mention (`@all`,
/// `&#64;user`), the `#`, `!`, `$` or `&` of an issue, merge request, snippet or epic
/// number, the `~` of a label and the `%` of a milestone, so that text from a merge
/// request's tests pings no one and links nothing elsewhere. GitLab reads none of them
/// inside code, which is left as it is.
pub fn inert_for_gitlab(body: &str) -> String {
    let body = inert_quick_actions(body);
    let mut out = String::with_capacity(body.len() + body.len() / 64);
    let mut fenced = false;
    let mut lines = body.split_inclusive('\n');
    // The marker is ours, and must read back exactly as written.
    if let Some(marker) = lines.next() {
        out.push_str(marker);
    }
    for line in lines {
        let trimmed = line.trim_start_matches(['\u{200B}', ' ']);
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            out.push_str(line);
            continue;
        }
        if fenced {
            out.push_str(line);
            continue;
        }
        inert_references(line, &mut out);
    }
    out
}

/// One line's references made inert (see [`inert_for_gitlab`]), code spans left alone.
fn inert_references(line: &str, out: &mut String) {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let chars: Vec<char> = line.chars().collect();
    let mut in_code = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        out.push(c);
        if c == '`' {
            in_code = !in_code;
        }
        if in_code {
            i += 1;
            continue;
        }
        let before = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        // `&#64;`, the entity a mention is escaped as, is a mention once decoded.
        if c == '&' && chars[i + 1..].starts_with(&['#', '6', '4', ';']) {
            out.push_str("#64;\u{200B}");
            i += 5;
            continue;
        }
        let inert = match c {
            '@' => !word(before) && (word(next) || next == Some('.') || next == Some('-')),
            '#' | '!' | '$' | '&' => {
                next.is_some_and(|n| n.is_ascii_digit()) && before != Some('&')
            }
            '~' | '%' => !word(before) && (word(next) || next == Some('"')),
            _ => false,
        };
        if inert {
            out.push('\u{200B}');
        }
        i += 1;
    }
}

/// `body` with every line that begins with `/` (after spaces) made inert: a zero-width
/// space before the slash, which GitLab's quick actions do not read and no one sees.
pub fn inert_quick_actions(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    for line in body.split_inclusive('\n') {
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        if line[indent..].starts_with('/') {
            out.push_str(&line[..indent]);
            out.push('\u{200B}');
            out.push_str(&line[indent..]);
        } else {
            out.push_str(line);
        }
    }
    out
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.push('…');
    out
}

impl GitLabPublication {
    /// What `--dry-run` prints: each write, then what it writes.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for note in &self.notes {
            let _ = writeln!(out, "=== note: {note}");
        }
        if let Some(log) = &self.log {
            let _ = writeln!(out, "=== job log: the matrix");
            out.push_str(log);
        }
        if let Some(note) = &self.note {
            if let Some(reason) = &note.only_update {
                let _ = writeln!(
                    out,
                    "=== merge-request note: only an existing note is updated; none is created ({reason})"
                );
            }
            let project = project_path(&note.project);
            let _ = writeln!(
                out,
                "=== merge-request note on !{}: POST /projects/{project}/merge_requests/{}/notes, or PUT \
                 our note (first line {}) if its body differs; {} characters",
                note.mr,
                note.mr,
                note.marker,
                note.body.chars().count()
            );
            out.push_str(&note.body);
        }
        if let Some(status) = &self.status {
            let (path, body) = status.request();
            let _ = writeln!(
                out,
                "=== commit status: POST {path}\n{}",
                serde_json::to_string_pretty(&body).unwrap_or_default()
            );
        }
        out
    }

    /// Sends the note and the status. A failure of one does not stop the other.
    pub async fn send(&self, client: &GitHub) -> super::Sent {
        let mut sent = super::Sent::default();
        let mut record = |result: Result<String, ApiError>| match result {
            Ok(line) => sent.done.push(line),
            Err(e @ ApiError::Denied { .. }) => sent.denied.push(e),
            Err(e) => sent.failed.push(e),
        };
        if let Some(note) = &self.note {
            record(publish_note(client, note).await);
        }
        if let Some(status) = &self.status {
            record(publish_status(client, status).await);
        }
        sent
    }
}

/// One note as GitLab lists it.
#[derive(Debug, Clone)]
struct Listed {
    id: u64,
    body: String,
    author: String,
    created_at: String,
}

impl Listed {
    fn from_json(value: &Value) -> Option<Listed> {
        if value.get("system").and_then(Value::as_bool) == Some(true) {
            return None;
        }
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
            author: text("/author/username"),
            created_at: text("/created_at"),
        })
    }
}

async fn publish_note(client: &GitHub, plan: &NotePlan) -> Result<String, ApiError> {
    let target = format!("merge-request note on !{}", plan.mr);
    let notes = format!(
        "/projects/{}/merge_requests/{}/notes",
        project_path(&plan.project),
        plan.mr
    );
    if let Some(reason) = not_the_head(client, plan).await? {
        return Ok(format!("{target} not posted: {reason}"));
    }
    let author = match &plan.author {
        Some(author) => author.clone(),
        None => author(client).await?,
    };
    let author = author.as_str();
    let found = ours(client, plan, author).await?;
    if found.is_empty()
        && let Some(reason) = &plan.only_update
    {
        return Ok(format!("{target} not posted: {reason}"));
    }
    let create = || async {
        client
            .create(
                &notes,
                &json!({ "body": plan.body }),
                "creating the merge-request note",
                move || async move {
                    Ok(ours(client, plan, author)
                        .await?
                        .first()
                        .map(|n| json!({ "id": n.id })))
                },
            )
            .await
    };
    let Some((kept, duplicates)) = found.split_first() else {
        create().await?;
        return Ok(format!("{target} created"));
    };
    for duplicate in duplicates {
        client
            .delete(
                &format!("{notes}/{}", duplicate.id),
                "deleting a duplicate merge-request note",
            )
            .await?;
    }
    let removed = match duplicates.len() {
        0 => String::new(),
        n => format!(" ({n} duplicate{} removed)", plural(n, "", "s")),
    };
    let body = match (&plan.head_sha, plan.pending) {
        (Some(head), true) => {
            let over = inert_for_gitlab(&pending::over(&plan.body, head, &kept.body));
            // The earlier result below the mark is dropped rather than the note refused.
            if over.chars().count() > NOTE_LIMIT {
                plan.body.clone()
            } else {
                over
            }
        }
        _ => plan.body.clone(),
    };
    let normal = |s: &str| s.replace("\r\n", "\n").trim_end().to_owned();
    if normal(&kept.body) == normal(&body) {
        return Ok(format!("{target} unchanged, not rewritten{removed}"));
    }
    match client
        .put(
            &format!("{notes}/{}", kept.id),
            &json!({ "body": body }),
            "updating the merge-request note",
        )
        .await
    {
        Ok(_) => Ok(format!("{target} updated{removed}")),
        // Deleted meanwhile: the result is written anew, never lost.
        Err(ApiError::Denied { status: 404, .. }) => {
            create().await?;
            Ok(format!(
                "{target} created (the earlier one was gone){removed}"
            ))
        }
        Err(e) => Err(e),
    }
}

/// Why the note must not be written: the merge request's head is not the commit this
/// publication is about (a newer push's pipeline owns the note). A head that cannot be
/// read is no leave to write: the refusal or the odd answer is the error.
async fn not_the_head(client: &GitHub, plan: &NotePlan) -> Result<Option<String>, ApiError> {
    let Some(expected) = &plan.head_sha else {
        return Ok(None);
    };
    let what = "reading the merge request";
    let found = client
        .get(
            &format!(
                "/projects/{}/merge_requests/{}",
                project_path(&plan.project),
                plan.mr
            ),
            what,
        )
        .await?;
    let head = found.get("sha").and_then(Value::as_str).unwrap_or_default();
    if head.is_empty() {
        return Err(ApiError::Failed {
            what: what.to_owned(),
            message: format!(
                "GitLab's answer names no head (`sha`) of !{}: the note is not written without knowing it is still {expected}",
                plan.mr
            ),
        });
    }
    if head.eq_ignore_ascii_case(expected) {
        return Ok(None);
    }
    Ok(Some(format!(
        "!{}'s head is now {}, not {expected}: a newer push's pipeline writes the note",
        plan.mr,
        crate::untrusted::cut(head, 64)
    )))
}

/// The token's user (`GET /user`): our notes are the ones it wrote. A token that
/// cannot say whose it is (a job token) writes nothing: a note of someone else's with
/// our marker is never taken for ours.
async fn author(client: &GitHub) -> Result<String, ApiError> {
    let what = "reading the token's user";
    let user = match client.get("/user", what).await {
        Ok(user) => user,
        Err(ApiError::Failed { message, .. }) if message.starts_with("401") => {
            return Err(ApiError::Denied {
                what: what.to_owned(),
                status: 401,
                message: "Unauthorized".to_owned(),
            });
        }
        Err(e) => return Err(e),
    };
    match user.get("username").and_then(Value::as_str) {
        Some(name) if !name.is_empty() => Ok(name.to_owned()),
        _ => Err(ApiError::Failed {
            what: what.to_owned(),
            message: "GitLab's answer names no `username`: our notes cannot be told from others'; pass --comment-author".to_owned(),
        }),
    }
}

/// Our notes on the merge request (the marker on the first line, `author`'s), oldest
/// first, each once whatever the pages repeat.
async fn ours(client: &GitHub, plan: &NotePlan, author: &str) -> Result<Vec<Listed>, ApiError> {
    let what = "listing the merge request's notes";
    let mut seen = std::collections::HashSet::new();
    let mut ours = Vec::new();
    for page in 1..=MAX_PAGES {
        let listed = client
            .get(
                &format!(
                    "/projects/{}/merge_requests/{}/notes?sort=asc&order_by=created_at&per_page={PER_PAGE}&page={page}",
                    project_path(&plan.project),
                    plan.mr
                ),
                what,
            )
            .await?;
        let items = listed.as_array().ok_or_else(|| ApiError::Failed {
            what: what.to_owned(),
            message: format!("page {page} is not a list of notes"),
        })?;
        // GitLab may answer a page short of `per_page` when it hides notes the token
        // cannot read: only an empty page, or one with nothing new, is the end.
        let mut new = false;
        for note in items.iter().filter_map(Listed::from_json) {
            if !seen.insert(note.id) {
                continue;
            }
            new = true;
            if note.body.lines().next().unwrap_or_default().trim_end() == plan.marker
                && note.author == author
            {
                ours.push(note);
            }
        }
        if !new {
            break;
        }
    }
    ours.sort_by(|a, b| (&a.created_at, a.id).cmp(&(&b.created_at, b.id)));
    Ok(ours)
}

/// The most pages of 100 jobs read of one pipeline (GitLab's matrix allows 200 jobs per
/// job; retried jobs are listed too).
const MAX_JOB_PAGES: u32 = 50;

/// Every job of pipeline `pipeline_id` of `project`, retried ones included, as GitLab
/// lists them (`GET /projects/:id/pipelines/:pipeline_id/jobs`): what the report holds
/// each leg's result to, since the merge request's code wrote the results but not this
/// list. Read whole or not at all: pages until one is not full, and a page that is not
/// a list of jobs, an entry that is not a job, or more than 5,000 jobs is an error.
///
/// Each job becomes a [`RunJob`](crate::results::jobs::RunJob): its name, its tags, its runner's description as the
/// runner's name, `completed` with `success` or `failure` once it ran (GitLab's
/// `success` and `failed`; any other status is kept as it is, and is no leg), and its
/// own id in place of the attempt.
pub async fn pipeline_jobs(
    client: &GitHub,
    project: &str,
    pipeline_id: &str,
) -> Result<Vec<crate::results::jobs::RunJob>, ApiError> {
    let what = format!("the jobs of pipeline {pipeline_id}");
    let malformed = |message: String| ApiError::Failed {
        what: what.clone(),
        message,
    };
    let mut jobs = Vec::new();
    for page in 1..=MAX_JOB_PAGES {
        let listed = client
            .get(
                &format!(
                    "/projects/{}/pipelines/{pipeline_id}/jobs?include_retried=true&per_page={PER_PAGE}&page={page}",
                    project_path(project)
                ),
                &what,
            )
            .await?;
        let items = listed
            .as_array()
            .ok_or_else(|| malformed(format!("page {page} is not a list of jobs")))?;
        for (index, job) in items.iter().enumerate() {
            jobs.push(gitlab_job(job).ok_or_else(|| {
                malformed(format!(
                    "page {page}, job {index}: not a job as GitLab lists one (a numeric `id`; `name` and `status` as text, a name of at most 255 characters; at most {MAX_JOB_TAGS} tags of at most 255)"
                ))
            })?);
        }
        if items.len() < PER_PAGE {
            return Ok(jobs);
        }
    }
    Err(malformed(format!(
        "more than {} jobs: not all could be read",
        MAX_JOB_PAGES as usize * PER_PAGE
    )))
}

/// The most tags a listed job may have: every job listed is kept, so each is bounded.
const MAX_JOB_TAGS: usize = 64;

/// A listed job, its every field bounded (a job's name is at most 255 characters in
/// GitLab; a runner's description and a page's address are cut): `None` when it is not
/// one.
fn gitlab_job(v: &Value) -> Option<crate::results::jobs::RunJob> {
    let text = |pointer: &str| {
        v.pointer(pointer)
            .and_then(Value::as_str)
            .map(|t| crate::untrusted::cut(t, 1024))
    };
    let short = |t: &str| t.chars().count() <= 255;
    let tags = match v.get("tag_list") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(tags)) if tags.len() <= MAX_JOB_TAGS => tags
            .iter()
            .map(|t| t.as_str().filter(|t| short(t)).map(str::to_owned))
            .collect::<Option<Vec<_>>>()?,
        Some(_) => return None,
    };
    let name = v.get("name").and_then(Value::as_str).filter(|n| short(n))?;
    let status = text("/status")?;
    let (status, conclusion) = match status.as_str() {
        "success" => ("completed".to_owned(), Some("success".to_owned())),
        "failed" => ("completed".to_owned(), Some("failure".to_owned())),
        _ => (status, None),
    };
    Some(crate::results::jobs::RunJob {
        name: name.to_owned(),
        labels: tags,
        runner_name: text("/runner/description"),
        runner_group_name: None,
        status,
        conclusion,
        run_attempt: v.get("id")?.as_u64()?,
        html_url: text("/web_url"),
    })
}

async fn publish_status(client: &GitHub, plan: &StatusPlan) -> Result<String, ApiError> {
    let (path, body) = plan.request();
    let line = format!(
        "commit status \"{}\" on {} ({})",
        plan.name, plan.sha, plan.state
    );
    match client
        .create(&path, &body, "setting the commit status", || async {
            Ok(None)
        })
        .await
    {
        Ok(_) => Ok(line),
        // Already running: a pending mark posted twice.
        Err(ApiError::Failed { message, .. })
            if plan.state == "running" && message.contains("Cannot transition status") =>
        {
            Ok(format!("{line}: already running"))
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_job_is_bounded_or_not_a_job() {
        let job = |extra: Value| {
            let mut v = json!({ "id": 7, "name": "leg: [a]", "status": "success",
                                "tag_list": ["linux"], "runner": { "description": "r" } });
            for (k, x) in extra.as_object().unwrap() {
                v[k] = x.clone();
            }
            gitlab_job(&v)
        };
        let listed = job(json!({})).unwrap();
        assert_eq!(
            (listed.name.as_str(), listed.labels.clone()),
            ("leg: [a]", vec!["linux".to_owned()])
        );
        assert_eq!(listed.run_attempt, 7);
        assert!(job(json!({ "tag_list": null })).unwrap().labels.is_empty());
        let many: Vec<&str> = vec!["a"; MAX_JOB_TAGS + 1];
        for bad in [
            json!({ "tag_list": many }),
            json!({ "tag_list": ["x".repeat(256)] }),
            json!({ "tag_list": [1] }),
            json!({ "tag_list": "linux" }),
            json!({ "name": "n".repeat(256) }),
            json!({ "status": null }),
            json!({ "id": "7" }),
        ] {
            assert!(job(bad.clone()).is_none(), "{bad}");
        }
        let long = job(json!({ "runner": { "description": "d".repeat(5000) } })).unwrap();
        assert!(long.runner_name.unwrap().len() <= 1024);
    }

    #[test]
    fn quick_actions_are_made_inert() {
        let body = "<!-- m -->\n/merge\n  /approve now\nsee /merge here\n";
        let inert = inert_quick_actions(body);
        assert_eq!(
            inert,
            "<!-- m -->\n\u{200B}/merge\n  \u{200B}/approve now\nsee /merge here\n"
        );
        assert!(inert.lines().all(|l| !l.trim_start().starts_with('/')));
    }

    #[test]
    fn mentions_and_references_are_made_inert_outside_code() {
        let body = "<!-- m#1 -->\n| t &#64;all | @user x@y.z #12 group/p#3 !7 $4 &9 ~bug %v1 50% `@code` |\n```\n@all #1\n```\n";
        let inert = inert_for_gitlab(body);
        let z = '\u{200B}';
        assert_eq!(
            inert,
            format!(
                "<!-- m#1 -->\n| t &#64;{z}all | @{z}user x@y.z #{z}12 group/p#{z}3 !{z}7 ${z}4 &{z}9 ~{z}bug %{z}v1 50% `@code` |\n```\n@all #1\n```\n"
            )
        );
        // Entities stay entities.
        assert_eq!(inert_for_gitlab("a &#8203; b"), "a &#8203; b");
    }

    #[test]
    fn a_body_made_inert_is_cut_again_to_fit_the_limit() {
        // A renderer that fills whatever room it is given with lines beginning with `/`,
        // each of which gains a character when made inert.
        let render = |limit: usize| {
            let line = "/merge xxxxxxxxxxxxxxxx\n";
            let mut out = String::from("<!-- m -->\n");
            while out.len() + line.len() <= limit {
                out.push_str(line);
            }
            Ok::<_, ()>(out)
        };
        let body = fitted(render).unwrap();
        let chars = body.chars().count();
        assert!(chars <= NOTE_LIMIT && chars > NOTE_LIMIT - 4096, "{chars}");
        assert!(body.lines().skip(1).all(|l| l.starts_with('\u{200B}')));
    }

    #[test]
    fn projects_are_numbers_or_paths() {
        for ok in ["42", "group/name", "a/b/c.d", "my-group/my_project"] {
            assert!(check_project(ok).is_ok(), "{ok}");
        }
        for bad in [
            "", "name", "a/../b", "a//b", "a/b?x", "a/b#c", "a%2Fb", "/a/b",
        ] {
            assert!(check_project(bad).is_err(), "{bad}");
        }
        assert_eq!(project_path("a/b/c"), "a%2Fb%2Fc");
    }

    #[test]
    fn a_status_description_is_cut_to_gitlabs_limit() {
        let long = "é".repeat(300);
        let cut = cut(&long, STATUS_TEXT_LIMIT);
        assert_eq!(cut.chars().count(), STATUS_TEXT_LIMIT);
        assert!(cut.ends_with('…'));
    }
}
