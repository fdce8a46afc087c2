//! The GitHub REST client: octocrab underneath, with our retry rules on top.
//!
//! Requests are built and sent through octocrab's raw interface (`build_request` and
//! `execute`), so the method is the one GitHub documents (octocrab's `update_comment`
//! sends POST where the REST API documents PATCH) and the response's status and headers
//! stay visible: `retry-after` and `x-ratelimit-reset` decide how long to wait.
//!
//! - 500, 502, 503, 504 and transport errors: retried with exponential backoff;
//! - 429, and 403 that is a rate limit (primary or secondary): retried after the wait
//!   the response asks for;
//! - 403 (otherwise) and 404: [`ApiError::Denied`], which the caller treats as a
//!   read-only token;
//! - anything else: [`ApiError::Failed`] with the API's message.
//!
//! A create (POST) whose outcome is unknown (a 5xx or a broken connection) is never sent
//! again blindly: [`GitHub::create`] asks the caller to look for what it may have made.
//!
//! The token lives only in octocrab's authorization header, which hyper marks sensitive.
//! Every message that leaves this module passes through [`Token::redact`].

// Without the `github` feature the request machinery is compiled (and unit-tested) but
// never reached.
#![cfg_attr(not(feature = "github"), allow(dead_code, unused_imports))]

use std::future::Future;
use std::time::{Duration, SystemTime};

use http::Method;
use http::header::ACCEPT;
#[cfg(feature = "github")]
use octocrab::Octocrab;

/// Without the `github` feature there is no HTTP client: [`GitHub::new`] says so, and
/// no [`GitHub`] can exist.
#[cfg(not(feature = "github"))]
type Octocrab = std::convert::Infallible;

use super::response::{Attempt, classify, error_chain};
use crate::render::text::plural;
use serde_json::Value;

/// The largest answer read from the API (a page of 100 comments of 64 KiB each is 6 MiB).
const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;

/// The longest one request and its answer may take, whatever the connection's pace.
const EXCHANGE_DEADLINE: Duration = Duration::from_secs(90);

/// The longest a download (an artifact's archive) may take, whatever the connection's
/// pace: 512 MiB at 1 MB/s.
const DOWNLOAD_DEADLINE: Duration = Duration::from_secs(600);

/// The media type GitHub documents for the REST API.
pub const ACCEPT_JSON: &str = "application/vnd.github+json";

/// `text` as a query parameter's value: everything but letters and digits
/// percent-encoded.
pub fn query_value(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// A token. Its `Debug` shows `***`; it is only ever handed to octocrab.
#[derive(Clone)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(***)")
    }
}

/// Why the client cannot be set up: the token, the API URL, or a build without it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// The token cannot go into an HTTP header (never echoed).
    #[error("{0}")]
    Token(&'static str),
    /// The API URL or the HTTP client.
    #[error("{0}")]
    Client(String),
}

impl Token {
    /// A token from `--token` or `GITHUB_TOKEN` (surrounding white space removed).
    /// Refused, without echoing it, when it could not go into an HTTP header.
    pub fn new(raw: &str) -> Result<Token, SetupError> {
        let token = raw.trim();
        if token.is_empty() {
            return Err(SetupError::Token("the token is empty"));
        }
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(SetupError::Token(
                "the token contains spaces, line breaks or other characters a token cannot have",
            ));
        }
        Ok(Token(token.to_owned()))
    }

    /// `text` with every occurrence of the token replaced by `***`: as it is, and as a
    /// URL or form would carry it (any of its characters percent-encoded, in either
    /// case of hex digit).
    pub fn redact(&self, text: &str) -> String {
        let plain = text.replace(&self.0, "***");
        if !plain.contains('%') {
            return plain;
        }
        redact_encoded(&plain, &self.0)
    }
}

/// `text` with every run of characters that, its percent-escapes decoded, reads as
/// `token` replaced by `***` (`token` is ASCII, so a match begins and ends on a
/// character boundary of `text`).
fn redact_encoded(text: &str, token: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    // Where each decoded byte begins in `text`, and the end.
    let mut starts = Vec::with_capacity(bytes.len() + 1);
    let mut i = 0;
    while i < bytes.len() {
        starts.push(i);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(high), Some(low)) => {
                decoded.push(high << 4 | low);
                i += 3;
            }
            (b, ..) => {
                decoded.push(b);
                i += 1;
            }
        }
    }
    starts.push(bytes.len());
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut from = 0;
    while let Some(found) = memchr::memmem::find(&decoded[from..], token.as_bytes()) {
        let at = from + found;
        let (start, end) = (starts[at], starts[at + token.len()]);
        out.push_str(&text[copied..start]);
        out.push_str("***");
        copied = end;
        from = at + token.len();
    }
    out.push_str(&text[copied..]);
    out
}

/// How often and how long to retry.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub retries: u32,
    /// The first backoff; it doubles with each retry.
    pub base: Duration,
    /// The longest single wait: a rate limit that resets later fails instead.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            retries: 4,
            base: Duration::from_secs(1),
            max_wait: Duration::from_secs(120),
        }
    }
}

/// A request that did not succeed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// 403 (not a rate limit) or 404: the token may not do this (a read-only token on a
    /// fork's pull request, or a workflow without the permission).
    #[error("{what}: {status} {message}")]
    Denied {
        what: String,
        status: u16,
        message: String,
    },
    /// Any other failure, after the retries.
    #[error("{what}: {message}")]
    Failed { what: String, message: String },
}

/// What the client tells its caller while it works: the core never prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice<'a> {
    /// A request failed for a passing reason and is tried again (a whole warning line).
    Retrying(&'a str),
    /// A request was answered: method, path and status, never headers.
    Request(&'a str),
}

/// Where [`Notice`]s go.
pub type Notify = Box<dyn Fn(Notice<'_>) + Send + Sync>;

/// How requests carry the token: GitHub's bearer token (octocrab's own header), or a
/// GitLab header (`PRIVATE-TOKEN` for an access token, `JOB-TOKEN` for `CI_JOB_TOKEN`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    GitHub,
    GitLab(&'static str),
}

/// A REST client for one API root: GitHub's, or GitLab's (the same retry rules, its
/// own token header).
pub struct GitHub {
    octo: Octocrab,
    /// The API's root, as given (a redirect is resolved against it).
    api_url: String,
    token: Token,
    auth: Auth,
    policy: RetryPolicy,
    /// Receives retries and requests (by default, nothing does).
    pub notify: Notify,
}

impl GitHub {
    #[cfg(not(feature = "github"))]
    pub fn new(api_url: &str, token: Token, policy: RetryPolicy) -> Result<GitHub, SetupError> {
        let _ = (api_url, token, policy);
        Err(SetupError::Client(
            "this cargo-verify-matrix was built without its GitHub client (the default \
             `github` feature): it cannot post a comment or a check run; install it with \
             default features"
                .to_owned(),
        ))
    }

    /// A client for `api_url` (`https://api.github.com`, or GitHub Enterprise Server's
    /// `https://HOST/api/v3`) that authenticates with `token`.
    #[cfg(feature = "github")]
    pub fn new(api_url: &str, token: Token, policy: RetryPolicy) -> Result<GitHub, SetupError> {
        GitHub::with_auth(api_url, token, Auth::GitHub, policy)
    }

    /// A client for GitLab's API at `api_url` (`CI_API_V4_URL`) that sends `token` in
    /// the header `auth` names, and only to that API.
    #[cfg(feature = "github")]
    pub fn gitlab(
        api_url: &str,
        token: Token,
        header: &'static str,
        policy: RetryPolicy,
    ) -> Result<GitHub, SetupError> {
        GitHub::with_auth(api_url, token, Auth::GitLab(header), policy)
    }

    /// The octocrab client for `api_url`, with our timeouts; GitHub's token is
    /// octocrab's own header, GitLab's goes on each request ([`GitHub::headers`]).
    #[cfg(feature = "github")]
    fn with_auth(
        api_url: &str,
        token: Token,
        auth: Auth,
        policy: RetryPolicy,
    ) -> Result<GitHub, SetupError> {
        let mut builder = Octocrab::builder()
            .base_uri(api_url)
            .map_err(|e| SetupError::Client(format!("`{api_url}` is not a usable API URL: {e}")))?;
        let service = match auth {
            Auth::GitHub => {
                builder = builder.personal_token(token.0.clone());
                "GitHub"
            }
            Auth::GitLab(_) => "GitLab",
        };
        let octo = builder
            .set_connect_timeout(Some(Duration::from_secs(15)))
            .set_read_timeout(Some(Duration::from_secs(60)))
            .set_write_timeout(Some(Duration::from_secs(60)))
            .build()
            .map_err(|e| {
                SetupError::Client(
                    token.redact(&format!("cannot set up the {service} client: {e}")),
                )
            })?;
        Ok(GitHub {
            octo,
            api_url: api_url.trim_end_matches('/').to_owned(),
            token,
            auth,
            policy,
            notify: Box::new(|_| {}),
        })
    }

    #[cfg(not(feature = "github"))]
    pub fn gitlab(
        api_url: &str,
        token: Token,
        header: &'static str,
        policy: RetryPolicy,
    ) -> Result<GitHub, SetupError> {
        let _ = header;
        GitHub::new(api_url, token, policy)
    }

    /// The request's headers: the media type, and under GitLab the token (to the API's
    /// own paths only: never to an absolute address another host may serve).
    fn headers(&self, builder: http::request::Builder, path: &str) -> http::request::Builder {
        match self.auth {
            Auth::GitHub => builder.header(ACCEPT, ACCEPT_JSON),
            Auth::GitLab(name) => {
                let builder = builder.header(ACCEPT, "application/json");
                if !path.starts_with('/') {
                    return builder;
                }
                match http::HeaderValue::from_str(&self.token.0) {
                    Ok(mut value) => {
                        value.set_sensitive(true);
                        builder.header(name, value)
                    }
                    Err(_) => builder,
                }
            }
        }
    }

    /// `text` without the token.
    pub fn redact(&self, text: &str) -> String {
        self.token.redact(text)
    }

    /// A GET, retried as needed.
    pub async fn get(&self, path: &str, what: &str) -> Result<Value, ApiError> {
        self.idempotent(Method::GET, path, None, what).await
    }

    /// A PATCH, retried as needed (it sets a state, so sending it twice is harmless).
    pub async fn patch(&self, path: &str, body: &Value, what: &str) -> Result<Value, ApiError> {
        self.idempotent(Method::PATCH, path, Some(body), what).await
    }

    /// A PUT, retried as needed (it sets a state, as a PATCH does).
    pub async fn put(&self, path: &str, body: &Value, what: &str) -> Result<Value, ApiError> {
        self.idempotent(Method::PUT, path, Some(body), what).await
    }

    /// A DELETE, retried as needed; a 404 means it is already gone.
    pub async fn delete(&self, path: &str, what: &str) -> Result<(), ApiError> {
        match self.idempotent(Method::DELETE, path, None, what).await {
            Ok(_) | Err(ApiError::Denied { status: 404, .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    async fn idempotent(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        what: &str,
    ) -> Result<Value, ApiError> {
        let mut retry = 0;
        loop {
            match self.attempt(&method, path, body, what).await {
                Attempt::Done(value) => return Ok(value),
                Attempt::Fatal(error) => return Err(error),
                Attempt::Retry { wait, message, .. } => {
                    self.before_retry(&mut retry, wait, what, message).await?;
                }
            }
        }
    }

    /// A POST that creates something. When its outcome is unknown, `find_existing` is
    /// asked (after the wait) whether the thing exists now; only if it does not is the
    /// POST sent again.
    pub async fn create<F, Fut>(
        &self,
        path: &str,
        body: &Value,
        what: &str,
        mut find_existing: F,
    ) -> Result<Value, ApiError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<Option<Value>, ApiError>>,
    {
        let mut retry = 0;
        loop {
            match self.attempt(&Method::POST, path, Some(body), what).await {
                Attempt::Done(value) => return Ok(value),
                Attempt::Fatal(error) => return Err(error),
                Attempt::Retry {
                    wait,
                    maybe_applied,
                    message,
                } => {
                    self.before_retry(&mut retry, wait, what, message).await?;
                    if maybe_applied && let Some(existing) = find_existing().await? {
                        return Ok(existing);
                    }
                }
            }
        }
    }

    /// Waits before retry number `retry + 1` (`wait`, or else the backoff: the base
    /// doubled for each retry so far), or gives up with `message`.
    async fn before_retry(
        &self,
        retry: &mut u32,
        wait: Option<Duration>,
        what: &str,
        message: String,
    ) -> Result<(), ApiError> {
        let wait = wait.unwrap_or_else(|| {
            self.policy
                .base
                .saturating_mul(1 << (*retry).min(16))
                .min(self.policy.max_wait)
        });
        if *retry >= self.policy.retries {
            let tries = *retry + 1;
            return Err(ApiError::Failed {
                what: what.to_owned(),
                message: format!(
                    "{message} (gave up after {tries} attempt{})",
                    plural(tries as usize, "", "s")
                ),
            });
        }
        if wait > self.policy.max_wait {
            return Err(ApiError::Failed {
                what: what.to_owned(),
                message: format!(
                    "{message}; GitHub asks to wait {} s, longer than the {} s this command waits",
                    wait.as_secs(),
                    self.policy.max_wait.as_secs()
                ),
            });
        }
        *retry += 1;
        (self.notify)(Notice::Retrying(&format!(
            "{what}: {message}; retrying in {:.1} s ({}/{})",
            wait.as_secs_f64(),
            retry,
            self.policy.retries
        )));
        tokio::time::sleep(wait).await;
        Ok(())
    }

    #[cfg(not(feature = "github"))]
    async fn attempt(
        &self,
        _method: &Method,
        _path: &str,
        _body: Option<&Value>,
        _what: &str,
    ) -> Attempt {
        match self.octo {}
    }

    #[cfg(feature = "github")]
    async fn attempt(
        &self,
        method: &Method,
        path: &str,
        body: Option<&Value>,
        what: &str,
    ) -> Attempt {
        let builder = self.headers(
            http::Request::builder().method(method.clone()).uri(path),
            path,
        );
        let request = match self.octo.build_request(builder, body) {
            Ok(request) => request,
            Err(e) => {
                return Attempt::Fatal(ApiError::Failed {
                    what: what.to_owned(),
                    message: format!("cannot build the request: {e}"),
                })
                .redacted(&self.token);
            }
        };
        // Without a complete response, a POST may or may not have been carried out.
        let lost = |message: String| Attempt::Retry {
            wait: None,
            maybe_applied: *method == Method::POST,
            message,
        };
        use http_body_util::{BodyExt, Limited};
        // The whole exchange has a deadline (a server that sends a byte a minute never
        // trips the read timeout) and the answer a size: neither waits or grows without
        // end.
        let exchange = async {
            let response = match self.octo.execute(request).await {
                Ok(response) => response,
                Err(e) => {
                    self.trace(method, path, "no response");
                    return lost(error_chain(&e));
                }
            };
            let status = response.status();
            let headers = response.headers().clone();
            let attempt = match Limited::new(response.into_body(), MAX_RESPONSE_BYTES)
                .collect()
                .await
            {
                Ok(body) => classify(
                    status,
                    &headers,
                    &String::from_utf8_lossy(&body.to_bytes()),
                    what,
                    SystemTime::now(),
                ),
                Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                    Attempt::Fatal(ApiError::Failed {
                        what: what.to_owned(),
                        message: format!(
                            "the answer is larger than {} MiB",
                            MAX_RESPONSE_BYTES / (1024 * 1024)
                        ),
                    })
                }
                Err(e) => lost(format!("reading the response failed: {e}")),
            };
            self.trace(method, path, status.as_str());
            attempt
        };
        match tokio::time::timeout(EXCHANGE_DEADLINE, exchange).await {
            Ok(attempt) => attempt.redacted(&self.token),
            Err(_) => {
                self.trace(method, path, "no answer in time");
                lost(format!(
                    "no whole answer within {} s",
                    EXCHANGE_DEADLINE.as_secs()
                ))
                .redacted(&self.token)
            }
        }
    }

    #[cfg(not(feature = "github"))]
    pub async fn download(
        &self,
        _path: &str,
        _max: usize,
        _what: &str,
    ) -> Result<Vec<u8>, ApiError> {
        match self.octo {}
    }

    /// The bytes at `path` (an artifact's `/zip`), following GitHub's redirect to its
    /// storage (which gets no token: octocrab sends it only to the API's own host), at
    /// most `max` bytes; retried as a GET is.
    #[cfg(feature = "github")]
    pub async fn download(&self, path: &str, max: usize, what: &str) -> Result<Vec<u8>, ApiError> {
        let mut retry = 0;
        loop {
            match self.download_once(path, max, what).await {
                Ok(bytes) => return Ok(bytes),
                Err(Attempt::Retry { wait, message, .. }) => {
                    self.before_retry(&mut retry, wait, what, message).await?;
                }
                Err(Attempt::Fatal(error)) => return Err(error),
                // Never made: a success is its bytes.
                Err(Attempt::Done(_)) => {
                    return Err(ApiError::Failed {
                        what: what.to_owned(),
                        message: "unexpected answer".to_owned(),
                    });
                }
            }
        }
    }

    #[cfg(feature = "github")]
    async fn download_once(&self, path: &str, max: usize, what: &str) -> Result<Vec<u8>, Attempt> {
        match tokio::time::timeout(DOWNLOAD_DEADLINE, self.download_hops(path, max, what)).await {
            Ok(attempt) => attempt,
            Err(_) => Err(Attempt::Fatal(ApiError::Failed {
                what: what.to_owned(),
                message: format!("no whole download within {} s", DOWNLOAD_DEADLINE.as_secs()),
            })),
        }
    }

    /// One download: the API's own `path` with the token, then at most two redirects,
    /// each resolved against the address that gave it and fetched without the token
    /// (storage, wherever it is: a relative address on the API's host gets none
    /// either).
    #[cfg(feature = "github")]
    async fn download_hops(&self, path: &str, max: usize, what: &str) -> Result<Vec<u8>, Attempt> {
        use http_body_util::{BodyExt, Limited};
        let lost = |message: String| {
            Attempt::Retry {
                wait: None,
                maybe_applied: false,
                message,
            }
            .redacted(&self.token)
        };
        let fatal = |message: String| {
            Attempt::Fatal(ApiError::Failed {
                what: what.to_owned(),
                message,
            })
        };
        // The address being fetched: the API's path first (`None`), then a redirect's.
        let mut address: Option<String> = None;
        let mut storage;
        // The API answers with a redirect to the archive; one hop more is a loop.
        for _ in 0..3 {
            // The API's client puts its own path (`/api/v3`, `/api/v4`) before every
            // request's: an address elsewhere goes through a client of that address's
            // own, which has no token.
            let (client, uri) = match &address {
                None => (&self.octo, path.to_owned()),
                Some(address) => {
                    storage = storage_client(address).map_err(fatal)?;
                    (&storage, address.clone())
                }
            };
            let builder = self.headers(
                http::Request::builder()
                    .method(Method::GET)
                    .uri(uri.as_str()),
                &uri,
            );
            let request = client.build_request::<()>(builder, None).map_err(|e| {
                fatal(format!("cannot build the request: {e}")).redacted(&self.token)
            })?;
            // A storage address carries its signature in the query: never shown.
            let shown = uri.split('?').next().unwrap_or_default().to_owned();
            let response = match client.execute(request).await {
                Ok(response) => response,
                Err(e) => {
                    self.trace(&Method::GET, &shown, "no response");
                    return Err(lost(error_chain(&e)));
                }
            };
            let status = response.status();
            self.trace(&Method::GET, &shown, status.as_str());
            if status.is_redirection()
                && let Some(location) = response
                    .headers()
                    .get(http::header::LOCATION)
                    .and_then(|l| l.to_str().ok())
            {
                let base = match &address {
                    None => format!("{}{path}", self.api_url),
                    Some(address) => address.clone(),
                };
                address = Some(resolved(&base, location).map_err(fatal)?);
                continue;
            }
            let headers = response.headers().clone();
            if !status.is_success() {
                let text = match Limited::new(response.into_body(), 64 * 1024)
                    .collect()
                    .await
                {
                    Ok(body) => String::from_utf8_lossy(&body.to_bytes()).into_owned(),
                    Err(_) => String::new(),
                };
                return Err(classify(status, &headers, &text, what, SystemTime::now())
                    .redacted(&self.token));
            }
            return match Limited::new(response.into_body(), max).collect().await {
                Ok(body) => Ok(body.to_bytes().to_vec()),
                Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                    Err(fatal(format!("larger than {max} bytes: not downloaded")))
                }
                Err(e) => Err(lost(format!("reading the download failed: {e}"))),
            };
        }
        Err(fatal("too many redirects".to_owned()))
    }

    fn trace(&self, method: &Method, path: &str, status: &str) {
        (self.notify)(Notice::Request(&format!(
            "{method} {} -> {status}",
            self.redact(path)
        )));
    }
}

/// A redirect's `location` resolved against the address `base` that gave it: absolute
/// (`https://…`), scheme-relative (`//host/…`) or host-relative (`/…`); anything else
/// is refused.
fn resolved(base: &str, location: &str) -> Result<String, String> {
    let lower = location.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return Ok(location.to_owned());
    }
    let base: http::Uri = base
        .parse()
        .map_err(|_| "the download's address cannot be read".to_owned())?;
    let (Some(scheme), Some(authority)) = (base.scheme_str(), base.authority()) else {
        return Err("the download's address is not absolute".to_owned());
    };
    if location.starts_with("//") {
        Ok(format!("{scheme}:{location}"))
    } else if location.starts_with('/') {
        Ok(format!("{scheme}://{authority}{location}"))
    } else {
        Err("the redirect goes to an address that is neither absolute nor on the host".to_owned())
    }
}

/// A client without a token for `address`'s scheme and host (object storage a download
/// is redirected to), with the API client's timeouts.
#[cfg(feature = "github")]
fn storage_client(address: &str) -> Result<Octocrab, String> {
    let uri: http::Uri = address
        .parse()
        .map_err(|_| "the redirect goes to an address that cannot be read".to_owned())?;
    let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
        return Err("the redirect goes to an address that is not absolute".to_owned());
    };
    if !matches!(scheme, "http" | "https") {
        return Err(format!("the redirect goes to a `{scheme}` address"));
    }
    Octocrab::builder()
        .base_uri(format!("{scheme}://{authority}"))
        .and_then(|b| {
            b.set_connect_timeout(Some(Duration::from_secs(15)))
                .set_read_timeout(Some(Duration::from_secs(60)))
                .set_write_timeout(Some(Duration::from_secs(60)))
                .build()
        })
        .map_err(|e| format!("cannot set up a client for the storage: {e}"))
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
