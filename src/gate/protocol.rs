//! The four agents' hook protocols, as their clients document them: what each sends
//! (one JSON object on stdin) and how each is answered (one line of JSON on stdout, or
//! nothing). The judgement is the same for all ([`super::trust`]); only the words differ.

use serde::{Deserialize, Serialize};

/// What the clients send (unknown fields ignored). Claude Code, Codex and Gemini CLI
/// name the session `session_id` and say a stop continues a block with
/// `stop_hook_active`; Cursor names it `conversation_id` and counts the continuations
/// in `loop_count`, with the turn's `status`.
#[derive(Debug, Default, Deserialize)]
pub struct HookInput {
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    conversation_id: Option<String>,
    #[serde(default)]
    hook_event_name: Option<String>,
    #[serde(default)]
    stop_hook_active: bool,
    #[serde(default)]
    loop_count: Option<u64>,
    #[serde(default)]
    status: Option<String>,
}

impl HookInput {
    /// The hook's input from `bytes` (nothing at all is an empty input: a person trying
    /// the hook by hand); why it is not the hook's JSON object.
    pub fn parse(bytes: &[u8]) -> Result<HookInput, String> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(HookInput::default());
        }
        serde_json::from_slice(bytes).map_err(|e| {
            format!(
                "stdin is not the hook's JSON object: {e} (line {}, column {})",
                e.line(),
                e.column()
            )
        })
    }

    /// The session (Cursor: the conversation).
    pub fn session(&self) -> String {
        self.session_id
            .clone()
            .or_else(|| self.conversation_id.clone())
            .unwrap_or_default()
    }

    /// Whether this stop is the continuation of a block.
    pub fn continues_a_block(&self) -> bool {
        self.stop_hook_active || self.loop_count.is_some_and(|n| n > 0)
    }

    /// What the event is to `client`.
    pub fn event(&self, client: Client) -> Event {
        let name = self.hook_event_name.as_deref().unwrap_or(match client {
            Client::StopHook => "Stop",
            Client::Gemini => "AfterAgent",
            Client::Cursor => "stop",
        });
        let is_stop = match client {
            Client::StopHook => matches!(name, "Stop" | "SubagentStop"),
            Client::Gemini => name == "AfterAgent",
            Client::Cursor => name == "stop",
        };
        if matches!(name, "SessionStart" | "sessionStart") {
            return Event::Start;
        }
        if !is_stop {
            return Event::Other(name.to_owned());
        }
        // Cursor: a turn the person aborted, or that ended in an error, is theirs to
        // see; no follow-up is forced on it.
        match self.status.as_deref() {
            Some(status) if client == Client::Cursor && status != "completed" => {
                Event::Unjudged(status.to_owned())
            }
            _ => Event::Stop,
        }
    }
}

/// What an event asks of the gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The session starts: its commit is pinned.
    Start,
    /// The agent would stop: the gate judges.
    Stop,
    /// Cursor's turn ended otherwise (`aborted`, `error`): nothing to judge.
    Unjudged(String),
    /// Another event: nothing to judge.
    Other(String),
}

/// The client a gate answers, each in its own documented words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// Claude Code's and Codex's Stop hook: `{"decision": "block", "reason"}`.
    StopHook,
    /// Gemini CLI's AfterAgent hook: `{"decision": "deny", "reason"}` retries the turn
    /// with the reason as its prompt.
    Gemini,
    /// Cursor's `stop` hook: `{"followup_message"}` is sent as the next user message;
    /// `{}` lets the agent stop.
    Cursor,
}

/// The answer: a block with its reason, or a message for the person watching (or both).
#[derive(Debug, Serialize)]
pub struct Answer {
    #[serde(skip_serializing_if = "Option::is_none")]
    decision: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(rename = "systemMessage", skip_serializing_if = "Option::is_none")]
    system_message: Option<String>,
}

/// An answer in one client's words.
pub struct Said {
    /// The line for stdout (none: an empty answer).
    pub stdout: Option<String>,
    /// What the person should read in the hook's log (Cursor's answer has no place for
    /// it).
    pub log: Option<String>,
}

impl Answer {
    pub fn block(reason: String) -> Answer {
        Answer {
            decision: Some("block"),
            reason: Some(reason),
            system_message: None,
        }
    }

    /// No word: the event is not one the gate judges.
    pub fn nothing() -> Answer {
        Answer {
            decision: None,
            reason: None,
            system_message: None,
        }
    }

    pub fn allow(message: String) -> Answer {
        Answer {
            decision: None,
            reason: None,
            system_message: Some(message),
        }
    }

    /// The same answer, with `message` for the person as well.
    pub fn telling(mut self, message: String) -> Answer {
        self.system_message = Some(message);
        self
    }

    /// Whether the stop is blocked.
    pub fn blocks(&self) -> bool {
        self.decision.is_some()
    }

    /// The answer in `client`'s words.
    pub fn said_to(&self, client: Client) -> Said {
        let silent = self.decision.is_none() && self.system_message.is_none();
        let line = |value: serde_json::Value| {
            let mut json = serde_json::to_string(&value).unwrap_or_default();
            json.push('\n');
            Some(json)
        };
        match client {
            // Claude Code and Codex read an empty answer as "go on".
            Client::StopHook if silent => Said {
                stdout: None,
                log: None,
            },
            Client::StopHook => Said {
                stdout: line(serde_json::to_value(self).unwrap_or_default()),
                log: None,
            },
            Client::Gemini => {
                let mut value = serde_json::to_value(self).unwrap_or_default();
                if self.decision.is_some() {
                    value["decision"] = "deny".into();
                }
                Said {
                    stdout: line(value),
                    log: None,
                }
            }
            // Cursor's stop hook reads `followup_message` only; what the person should
            // see goes to its hook log.
            Client::Cursor => Said {
                stdout: line(match (&self.decision, &self.reason) {
                    (Some(_), Some(reason)) => serde_json::json!({ "followup_message": reason }),
                    _ => serde_json::json!({}),
                }),
                log: self.system_message.clone(),
            },
        }
    }
}
