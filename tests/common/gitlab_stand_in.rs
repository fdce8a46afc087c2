//! A stand-in for GitLab's REST API (v4) on 127.0.0.1, written from GitLab's REST
//! documentation and answering as GitLab does: it keeps merge-request notes and commit
//! statuses as state, pages notes as GitLab pages them, refuses what GitLab refuses (a
//! job token writing, a note over 1,000,000 characters, an impossible status
//! transition, another user's note), and records every request.
//!
//! One project (`PROJECT_ID`, path `group/project`), whose merge requests are created
//! with [`GitLab::merge_request`]. Access tokens are sent as `PRIVATE-TOKEN` (or
//! `Authorization: Bearer`), job tokens as `JOB-TOKEN`.

#![allow(dead_code)]

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

pub const PROJECT_ID: u64 = 42;
pub const PROJECT_PATH: &str = "group/project";
/// The access token the stand-in knows, and its bot user's name.
pub const TOKEN: &str = "glpat-TestTokenThatMustNeverBeShown0123";
pub const BOT: &str = "project_42_bot_0a1b2c";
/// The job token it knows.
pub const JOB_TOKEN: &str = "glcbt-64_JobTokenThatMustNeverBeShown";

/// A note as GitLab keeps it.
#[derive(Debug, Clone)]
pub struct Note {
    pub id: u64,
    pub body: String,
    pub author: String,
    pub system: bool,
}

/// A commit status as GitLab keeps it.
#[derive(Debug, Clone)]
pub struct Status {
    pub id: u64,
    pub sha: String,
    pub name: String,
    pub state: String,
    pub description: String,
    pub target_url: Option<String>,
    pub pipeline_id: Option<u64>,
}

/// One recorded request: method, path with its query, the auth header used, body.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub target: String,
    pub auth: Option<(String, String)>,
    pub body: Value,
}

/// A forced answer: method, path prefix, status, body, headers.
pub type Fault = (String, String, u16, Value, Vec<(String, String)>);

#[derive(Default)]
pub struct State {
    /// Merge request iid → its head and notes.
    pub mrs: BTreeMap<u64, (String, Vec<Note>)>,
    pub statuses: Vec<Status>,
    /// Pipeline id → its jobs, as `GET …/pipelines/:id/jobs` lists them.
    pub jobs: BTreeMap<u64, Vec<Value>>,
    /// The project's pipelines, as `GET …/pipelines` lists them (`id`, `ref`, `sha`,
    /// `status`, `source`, `updated_at`).
    pub pipelines: Vec<Value>,
    /// Job id → its artifacts archive (`GET …/jobs/:id/artifacts`).
    pub artifacts: BTreeMap<u64, Vec<u8>>,
    /// Answer an artifacts download with a redirect to object storage (as gitlab.com
    /// does), whose address carries a signature.
    pub artifacts_in_storage: bool,
    pub requests: Vec<Recorded>,
    /// Answers given before any other, in order: (method, path prefix, status, body,
    /// headers).
    pub faults: VecDeque<Fault>,
    /// Answer every page of notes as the first (a proxy that drops `page`).
    pub ignore_page: bool,
    next_id: u64,
}

/// The stand-in: a server and its state.
pub struct GitLab {
    pub server: MockServer,
    pub state: Arc<Mutex<State>>,
}

impl GitLab {
    pub async fn start() -> GitLab {
        let server = MockServer::start().await;
        let state = Arc::new(Mutex::new(State {
            next_id: 1000,
            ..State::default()
        }));
        Mock::given(wiremock::matchers::any())
            .respond_with(Api(state.clone()))
            .mount(&server)
            .await;
        GitLab { server, state }
    }

    /// `CI_API_V4_URL`.
    pub fn api_url(&self) -> String {
        format!("{}/api/v4", self.server.uri())
    }

    /// Opens merge request `iid` with head `sha`.
    pub fn merge_request(&self, iid: u64, sha: &str) {
        self.state
            .lock()
            .unwrap()
            .mrs
            .insert(iid, (sha.to_owned(), Vec::new()));
    }

    /// Adds a note to merge request `iid` as `author`.
    pub fn add_note(&self, iid: u64, author: &str, body: &str, system: bool) -> u64 {
        let mut state = self.state.lock().unwrap();
        state.next_id += 1;
        let id = state.next_id;
        state
            .mrs
            .get_mut(&iid)
            .expect("an open merge request")
            .1
            .push(Note {
                id,
                body: body.to_owned(),
                author: author.to_owned(),
                system,
            });
        id
    }

    /// The next answer to `method` on a path beginning with `prefix` is `status`.
    pub fn fault(
        &self,
        method: &str,
        prefix: &str,
        status: u16,
        body: Value,
        headers: &[(&str, &str)],
    ) {
        self.state.lock().unwrap().faults.push_back((
            method.to_owned(),
            prefix.to_owned(),
            status,
            body,
            headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        ));
    }

    pub fn notes(&self, iid: u64) -> Vec<Note> {
        self.state.lock().unwrap().mrs[&iid].1.clone()
    }

    pub fn statuses(&self) -> Vec<Status> {
        self.state.lock().unwrap().statuses.clone()
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().requests.clone()
    }

    /// Adds pipeline `id` of `git_ref` at `sha`, started by `source`, finished as
    /// `status`.
    pub fn pipeline(&self, id: u64, git_ref: &str, source: &str, status: &str) {
        self.state.lock().unwrap().pipelines.push(json!({
            "id": id, "iid": id - 400, "project_id": PROJECT_ID, "ref": git_ref,
            "sha": format!("{id:040x}"), "status": status, "source": source,
            "created_at": "2026-11-20T10:00:00.000Z",
            "updated_at": format!("2026-11-20T10:{:02}:00.000Z", id % 60),
            "web_url": format!("https://gitlab.example/{PROJECT_PATH}/-/pipelines/{id}"),
        }));
    }

    /// Adds job `id` named `name` to `pipeline`, keeping `archive` as its artifacts.
    pub fn job_with_artifacts(&self, pipeline: u64, id: u64, name: &str, archive: Option<Vec<u8>>) {
        let mut state = self.state.lock().unwrap();
        state.jobs.entry(pipeline).or_default().push(json!({
            "id": id, "name": name, "status": "success", "stage": "verify-matrix-report",
            "tag_list": [], "allow_failure": false,
            "runner": { "id": 9, "description": "shared runner 9" },
            "web_url": format!("https://gitlab.example/{PROJECT_PATH}/-/jobs/{id}"),
        }));
        if let Some(archive) = archive {
            state.artifacts.insert(id, archive);
        }
    }
}

struct Api(Arc<Mutex<State>>);

fn answer(status: u16, body: Value) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(body)
}

fn message(status: u16, text: &str) -> ResponseTemplate {
    answer(status, json!({ "message": text }))
}

impl Respond for Api {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let mut state = self.0.lock().unwrap();
        let header = |name: &str| {
            request
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let auth = header("private-token")
            .map(|t| ("PRIVATE-TOKEN".to_owned(), t))
            .or_else(|| header("job-token").map(|t| ("JOB-TOKEN".to_owned(), t)))
            .or_else(|| {
                header("authorization")
                    .and_then(|a| a.strip_prefix("Bearer ").map(str::to_owned))
                    .map(|t| ("Bearer".to_owned(), t))
            });
        let body: Value = if request.body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&request.body).unwrap_or(Value::Null)
        };
        let path = request.url.path().to_owned();
        let target = match request.url.query() {
            Some(q) => format!("{path}?{q}"),
            None => path.clone(),
        };
        let method = request.method.to_string();
        state.requests.push(Recorded {
            method: method.clone(),
            target,
            auth: auth.clone(),
            body: body.clone(),
        });
        if let Some(i) = state
            .faults
            .iter()
            .position(|(m, prefix, ..)| *m == method && path.starts_with(prefix.as_str()))
        {
            let (_, _, status, body, headers) = state.faults.remove(i).unwrap();
            let mut template = answer(status, body);
            for (k, v) in headers {
                template = template.insert_header(k.as_str(), v.as_str());
            }
            return template;
        }
        // Object storage: signed addresses, no token asked for (one sent is recorded).
        if let Some(job) = path.strip_prefix("/storage/") {
            return match job
                .parse::<u64>()
                .ok()
                .and_then(|j| state.artifacts.get(&j))
            {
                Some(bytes) if request.url.query() == Some("X-Goog-Signature=sig-secret") => {
                    ResponseTemplate::new(200)
                        .insert_header("content-type", "application/zip")
                        .set_body_bytes(bytes.clone())
                }
                _ => ResponseTemplate::new(403),
            };
        }
        // Who is asking: the bot behind the access token, or the job.
        let (user, job) = match &auth {
            Some((kind, token)) if kind != "JOB-TOKEN" && token == TOKEN => (Some(BOT), false),
            Some((kind, token)) if kind == "JOB-TOKEN" && token == JOB_TOKEN => (None, true),
            _ => return message(401, "401 Unauthorized"),
        };
        let query = |name: &str| {
            request
                .url
                .query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        let Some(rest) = path.strip_prefix("/api/v4") else {
            return message(404, "404 Not Found");
        };
        let parts: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
        let project_ok = |p: &str| p == PROJECT_ID.to_string() || p == "group%2Fproject";
        match (method.as_str(), parts.as_slice()) {
            ("GET", ["user"]) => match user {
                Some(name) => answer(200, json!({ "id": 7, "username": name, "bot": true })),
                None => message(401, "401 Unauthorized"),
            },
            (_, ["projects", p, ..]) if !project_ok(p) => message(404, "404 Project Not Found"),
            ("GET", ["projects", _]) => {
                if job {
                    return message(403, "403 Forbidden");
                }
                answer(
                    200,
                    json!({ "id": PROJECT_ID, "path_with_namespace": PROJECT_PATH,
                            "default_branch": "main" }),
                )
            }
            ("GET", ["projects", _, "pipelines"]) => {
                // The job token lists no pipelines.
                if job {
                    return message(403, "403 Forbidden");
                }
                let per_page: usize = query("per_page")
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(20)
                    .clamp(1, 100);
                let page: usize = query("page")
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(1)
                    .max(1);
                let finished = ["success", "failed", "canceled"];
                let mut listed: Vec<&Value> = state
                    .pipelines
                    .iter()
                    .filter(|p| query("ref").is_none_or(|r| p["ref"] == r.as_str()))
                    .filter(|p| {
                        query("scope").as_deref() != Some("finished")
                            || finished.iter().any(|f| p["status"] == *f)
                    })
                    .collect();
                listed.sort_by_key(|p| p["id"].as_u64());
                if query("sort").as_deref() != Some("asc") {
                    listed.reverse();
                }
                let shown: Vec<Value> = listed
                    .into_iter()
                    .skip((page - 1) * per_page)
                    .take(per_page)
                    .cloned()
                    .collect();
                answer(200, Value::Array(shown))
            }
            ("GET", ["projects", _, "jobs", id, "artifacts"]) => {
                let Some(bytes) = id.parse::<u64>().ok().and_then(|j| state.artifacts.get(&j))
                else {
                    return message(404, "404 Not Found");
                };
                if state.artifacts_in_storage {
                    let location = format!(
                        "http://{}/storage/{id}?X-Goog-Signature=sig-secret",
                        header("host").unwrap_or_default()
                    );
                    return ResponseTemplate::new(302).insert_header("location", location.as_str());
                }
                ResponseTemplate::new(200)
                    .insert_header("content-type", "application/zip")
                    .set_body_bytes(bytes.clone())
            }
            ("GET", ["projects", _, "merge_requests", iid]) => {
                match iid
                    .parse::<u64>()
                    .ok()
                    .and_then(|i| state.mrs.get(&i).map(|m| (i, m)))
                {
                    Some((i, (sha, _))) => {
                        answer(200, json!({ "iid": i, "sha": sha, "state": "opened" }))
                    }
                    None => message(404, "404 Not found"),
                }
            }
            ("GET", ["projects", _, "merge_requests", iid, "notes"]) => {
                let Some((_, notes)) = iid.parse::<u64>().ok().and_then(|i| state.mrs.get(&i))
                else {
                    return message(404, "404 Not found");
                };
                let per_page: usize = query("per_page")
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(20)
                    .clamp(1, 100);
                let page: usize = if state.ignore_page {
                    1
                } else {
                    query("page")
                        .and_then(|p| p.parse().ok())
                        .unwrap_or(1)
                        .max(1)
                };
                let mut sorted: Vec<&Note> = notes.iter().collect();
                // Newest first unless asked otherwise, as GitLab lists them.
                if query("sort").as_deref() != Some("asc") {
                    sorted.reverse();
                }
                let total = sorted.len();
                let shown: Vec<Value> = sorted
                    .iter()
                    .skip((page - 1) * per_page)
                    .take(per_page)
                    .map(|n| note_json(n))
                    .collect();
                let pages = total.div_ceil(per_page).max(1);
                let next = if page < pages {
                    (page + 1).to_string()
                } else {
                    String::new()
                };
                answer(200, Value::Array(shown))
                    .insert_header("x-page", page.to_string().as_str())
                    .insert_header("x-per-page", per_page.to_string().as_str())
                    .insert_header("x-total", total.to_string().as_str())
                    .insert_header("x-total-pages", pages.to_string().as_str())
                    .insert_header("x-next-page", next.as_str())
            }
            ("POST", ["projects", _, "merge_requests", iid, "notes"]) => {
                if job {
                    return message(403, "403 Forbidden");
                }
                let Some(text) = body.get("body").and_then(Value::as_str) else {
                    return answer(400, json!({ "error": "body is missing" }));
                };
                if text.chars().count() > 1_000_000 {
                    return message(
                        400,
                        "400 Bad request - Note {:note=>[\"is too long (maximum is 1000000 characters)\"]}",
                    );
                }
                state.next_id += 1;
                let id = state.next_id;
                let Some((_, notes)) = iid.parse::<u64>().ok().and_then(|i| state.mrs.get_mut(&i))
                else {
                    return message(404, "404 Not found");
                };
                let note = Note {
                    id,
                    body: text.to_owned(),
                    author: user.unwrap_or_default().to_owned(),
                    system: false,
                };
                let shown = note_json(&note);
                notes.push(note);
                answer(201, shown)
            }
            ("PUT", ["projects", _, "merge_requests", iid, "notes", id]) => {
                if job {
                    return message(403, "403 Forbidden");
                }
                let Some(text) = body.get("body").and_then(Value::as_str) else {
                    return answer(400, json!({ "error": "body is missing" }));
                };
                let Some((_, notes)) = iid.parse::<u64>().ok().and_then(|i| state.mrs.get_mut(&i))
                else {
                    return message(404, "404 Not found");
                };
                let Some(note) = notes.iter_mut().find(|n| n.id.to_string() == *id) else {
                    return message(404, "404 Note Not Found");
                };
                if Some(note.author.as_str()) != user {
                    return message(403, "403 Forbidden");
                }
                note.body = text.to_owned();
                answer(200, note_json(note))
            }
            ("DELETE", ["projects", _, "merge_requests", iid, "notes", id]) => {
                let Some((_, notes)) = iid.parse::<u64>().ok().and_then(|i| state.mrs.get_mut(&i))
                else {
                    return message(404, "404 Not found");
                };
                match notes.iter().position(|n| n.id.to_string() == *id) {
                    Some(i) if Some(notes[i].author.as_str()) == user => {
                        notes.remove(i);
                        ResponseTemplate::new(204)
                    }
                    Some(_) => message(403, "403 Forbidden"),
                    None => message(404, "404 Note Not Found"),
                }
            }
            ("POST", ["projects", _, "statuses", sha]) => {
                if job {
                    return message(403, "403 Forbidden");
                }
                let state_name = body
                    .get("state")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                if ![
                    "pending", "running", "success", "failed", "canceled", "skipped",
                ]
                .contains(&state_name.as_str())
                {
                    return answer(400, json!({ "error": "state does not have a valid value" }));
                }
                let text = |k: &str| body.get(k).and_then(Value::as_str).map(str::to_owned);
                if text("target_url").is_some_and(|u| u.chars().count() > 255) {
                    return answer(
                        400,
                        json!({ "message": { "target_url": ["is too long (maximum is 255 characters)"] } }),
                    );
                }
                let name = text("name")
                    .or_else(|| text("context"))
                    .unwrap_or_else(|| "default".to_owned());
                // The latest status of that name, on that commit, if still open.
                if let Some(open) = state
                    .statuses
                    .iter_mut()
                    .rev()
                    .find(|s| s.sha == *sha && s.name == name)
                    .filter(|s| s.state == "running" || s.state == "pending")
                {
                    if open.state == state_name {
                        let verb = if state_name == "running" {
                            "run"
                        } else {
                            "enqueue"
                        };
                        return message(
                            400,
                            &format!(
                                "Cannot transition status via :{verb} from :{state_name} (Reason(s): Status cannot transition via \"{verb}\")"
                            ),
                        );
                    }
                    open.state = state_name.clone();
                    open.description = text("description").unwrap_or_default();
                    let shown = status_json(open);
                    return answer(201, shown);
                }
                state.next_id += 1;
                let status = Status {
                    id: state.next_id,
                    sha: (*sha).to_owned(),
                    name,
                    state: state_name,
                    description: text("description").unwrap_or_default(),
                    target_url: text("target_url"),
                    pipeline_id: body.get("pipeline_id").and_then(Value::as_u64),
                };
                let shown = status_json(&status);
                state.statuses.push(status);
                answer(201, shown)
            }
            ("GET", ["projects", _, "pipelines", id, "jobs"]) => {
                let jobs = id
                    .parse::<u64>()
                    .ok()
                    .and_then(|i| state.jobs.get(&i).cloned());
                match jobs {
                    Some(jobs) => {
                        let retried = query("include_retried").as_deref() == Some("true");
                        let listed: Vec<Value> = jobs
                            .into_iter()
                            .filter(|j| retried || j.get("retried") != Some(&Value::Bool(true)))
                            .map(|mut j| {
                                if let Some(o) = j.as_object_mut() {
                                    o.remove("retried");
                                }
                                j
                            })
                            .collect();
                        answer(200, Value::Array(listed))
                    }
                    None => message(404, "404 Not found"),
                }
            }
            _ => message(404, "404 Not Found"),
        }
    }
}

fn note_json(note: &Note) -> Value {
    json!({
        "id": note.id, "body": note.body, "system": note.system,
        "author": { "id": 7, "username": note.author, "name": note.author },
        "created_at": format!(
            "2026-11-27T{:02}:{:02}:{:02}.000Z",
            (note.id / 3600) % 24,
            (note.id / 60) % 60,
            note.id % 60
        ),
        "noteable_type": "MergeRequest", "project_id": PROJECT_ID,
    })
}

fn status_json(status: &Status) -> Value {
    json!({
        "id": status.id, "sha": status.sha, "name": status.name, "status": status.state,
        "description": status.description, "target_url": status.target_url,
        "pipeline_id": status.pipeline_id, "allow_failure": false,
    })
}
