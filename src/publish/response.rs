//! How one response (or a failure to get one) is sorted: done, worth another try (and
//! after how long), or fatal with the API's own message.

// Without the `github` feature the request machinery is compiled (and unit-tested) but
// never reached.
#![cfg_attr(not(feature = "github"), allow(dead_code))]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::StatusCode;
use http::header::HeaderMap;
use serde_json::Value;

use super::client::{ApiError, Token};
/// The outcome of one attempt.
pub(super) enum Attempt {
    Done(Value),
    /// Worth another try: after `wait` when the response names one, else after the
    /// backoff. `maybe_applied` when a write may have happened.
    Retry {
        wait: Option<Duration>,
        maybe_applied: bool,
        message: String,
    },
    Fatal(ApiError),
}

impl Attempt {
    /// The same outcome with the token taken out of its message.
    pub(super) fn redacted(self, token: &Token) -> Attempt {
        match self {
            Attempt::Retry {
                wait,
                maybe_applied,
                message,
            } => Attempt::Retry {
                wait,
                maybe_applied,
                message: token.redact(&message),
            },
            Attempt::Fatal(ApiError::Denied {
                what,
                status,
                message,
            }) => Attempt::Fatal(ApiError::Denied {
                what,
                status,
                message: token.redact(&message),
            }),
            Attempt::Fatal(ApiError::Failed { what, message }) => {
                Attempt::Fatal(ApiError::Failed {
                    what,
                    message: token.redact(&message),
                })
            }
            done @ Attempt::Done(_) => done,
        }
    }
}

/// Sorts a response into done, retry (and after how long) or fatal.
pub(super) fn classify(
    status: StatusCode,
    headers: &HeaderMap,
    text: &str,
    what: &str,
    now: SystemTime,
) -> Attempt {
    if status.is_success() {
        let value = if text.trim().is_empty() {
            Value::Null
        } else {
            match serde_json::from_str(text) {
                Ok(value) => value,
                Err(e) => {
                    return Attempt::Fatal(ApiError::Failed {
                        what: what.to_owned(),
                        message: format!("the response is not JSON: {e}"),
                    });
                }
            }
        };
        return Attempt::Done(value);
    }
    // GitLab's messages begin with the status already (`404 Project Not Found`).
    let said = api_message(status, text);
    let message = if said.starts_with(&format!("{} ", status.as_u16())) {
        said.clone()
    } else {
        format!("{} {said}", status.as_u16())
    };
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let retry_after = header("retry-after")
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_secs);
    let exhausted = header("x-ratelimit-remaining") == Some("0");
    let until_reset = header("x-ratelimit-reset")
        .and_then(|v| v.parse::<u64>().ok())
        .map(|reset| {
            let now = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
            // One second more: the reset time is rounded down.
            Duration::from_secs(reset.saturating_sub(now) + 1)
        });
    let secondary = text.to_ascii_lowercase().contains("secondary rate limit");
    let rate_limited = status == StatusCode::TOO_MANY_REQUESTS
        || (status == StatusCode::FORBIDDEN && (exhausted || secondary || retry_after.is_some()));
    if rate_limited {
        // GitHub's advice: retry-after if given; else the reset when the limit is
        // exhausted; else (a secondary limit) at least a minute.
        let wait = retry_after
            .or(if exhausted { until_reset } else { None })
            .unwrap_or(Duration::from_secs(60));
        return Attempt::Retry {
            wait: Some(wait),
            maybe_applied: false,
            message: format!("{message} (rate limited)"),
        };
    }
    match status.as_u16() {
        500 | 502 | 503 | 504 => Attempt::Retry {
            wait: retry_after,
            maybe_applied: true,
            message,
        },
        403 | 404 => Attempt::Fatal(ApiError::Denied {
            what: what.to_owned(),
            status: status.as_u16(),
            message: said
                .strip_prefix(&format!("{} ", status.as_u16()))
                .unwrap_or(&said)
                .to_owned(),
        }),
        _ => Attempt::Fatal(ApiError::Failed {
            what: what.to_owned(),
            message,
        }),
    }
}

/// The API's `message` (and the messages of its `errors`), or the status's reason.
fn api_message(status: StatusCode, text: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(text).ok();
    // GitHub's `message` is a string; GitLab's may be an object of field → errors or a
    // list, and its parameter errors come as `error`.
    let mut message = parsed
        .as_ref()
        .and_then(|v| v.get("message").or_else(|| v.get("error")))
        .and_then(|m| match m {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        })
        .unwrap_or_else(|| status.canonical_reason().unwrap_or("error").to_owned());
    let details: Vec<String> = parsed
        .as_ref()
        .and_then(|v| v.get("errors"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| match e {
            Value::String(s) => Some(s.clone()),
            other => other
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or_else(|| other.get("code").and_then(Value::as_str).map(str::to_owned)),
        })
        .collect();
    if !details.is_empty() {
        message = format!("{message} ({})", details.join("; "));
    }
    // One line, of a sane length: it ends up in a terminal and a log.
    let mut one_line: String = message
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(500)
        .collect();
    if message.chars().count() > 500 {
        one_line.push('…');
    }
    one_line
}

/// An error and its causes, on one line.
pub(super) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let line = cause.to_string();
        if !text.contains(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
        source = cause.source();
    }
    text
}
