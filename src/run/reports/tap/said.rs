//! What a test said of itself: its YAML block (node, TAP 14, Bats's `tap13`) and the
//! comments after its line (Test::More's `#   Failed test …`, Bats's `# (in test file
//! …)`): its message, its output, its time and its place.

use std::sync::LazyLock;

use regex::Regex;

/// Test::More's place of a failure: `#   at t/math.t line 10.`
static PERL_PLACE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)(?:^|\s)at (\S[^\n]{0,500}?) line (\d{1,9})\.?\s*$").expect("valid regex")
});
/// Bats's place of a failure: `# (in test file test/math.bats, line 10)`.
static BATS_PLACE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"in test file ([^\n,]{1,500}), line (\d{1,9})\)").expect("valid regex")
});

/// What a test said of itself: its YAML block (node, TAP 14, Bats's `tap13`) and the
/// comments after its line (Test::More, Bats).
#[derive(Default)]
pub(super) struct Said {
    pub(super) duration_ms: Option<u64>,
    pub(super) message: String,
    pub(super) output: String,
    pub(super) file: Option<String>,
    pub(super) line: Option<u32>,
    pub(super) failure_type: Option<String>,
    /// node's `type: 'suite'`: a `describe` block, which node does not count as a test.
    pub(super) suite: bool,
}

impl Said {
    /// What the YAML block `yaml` and the comments after the test line say.
    pub(super) fn read(yaml: Option<&str>, comments: &str) -> Said {
        let mut said = Said::default();
        let mut outputs: Vec<String> = Vec::new();
        if let Some(yaml) = yaml {
            match serde_yaml::from_str::<serde_yaml::Value>(yaml) {
                Ok(value) => said.take_yaml(&value, &mut outputs),
                // Diagnostics that are not YAML are still what the test said.
                Err(_) => outputs.push(yaml.to_owned()),
            }
        }
        let comments: Vec<&str> = comments
            .lines()
            .filter(|l| !l.trim_start().starts_with("Looks like you failed"))
            .collect();
        if !comments.is_empty() {
            if said.message.is_empty() {
                let lines: Vec<&str> = comments.iter().map(|l| l.trim()).collect();
                said.message = lines.join("\n");
            }
            outputs.push(comments.join("\n"));
        }
        said.output = outputs.join("\n");
        if said.file.is_none() {
            for text in [said.message.as_str(), said.output.as_str()] {
                let found = BATS_PLACE
                    .captures(text)
                    .or_else(|| PERL_PLACE.captures(text));
                if let Some(place) = found {
                    said.file = Some(place[1].trim().to_owned());
                    said.line = place[2].parse().ok();
                    break;
                }
            }
        }
        // The lines that only give the place (kept in the output) are not the message.
        let rest: Vec<&str> = said
            .message
            .lines()
            .filter(|l| !PERL_PLACE.is_match(l) && !BATS_PLACE.is_match(l))
            .collect();
        if rest.iter().any(|l| !l.trim().is_empty()) {
            said.message = rest.join("\n");
        }
        said
    }

    fn take_yaml(&mut self, value: &serde_yaml::Value, outputs: &mut Vec<String>) {
        let text = |key: &str| value.get(key).map(yaml_text);
        self.duration_ms = value
            .get("duration_ms")
            .and_then(serde_yaml::Value::as_f64)
            .filter(|d| d.is_finite() && *d >= 0.0)
            .map(|d| d.round() as u64);
        self.message = text("error")
            .or_else(|| text("message"))
            .unwrap_or_default();
        self.failure_type = text("failureType");
        self.suite = text("type").as_deref() == Some("suite");
        let stack = text("stack");
        for key in ["diff", "stack"] {
            if let Some(more) = text(key) {
                outputs.push(more);
            }
        }
        let place = match value.get("at") {
            Some(serde_yaml::Value::Mapping(_)) => {
                let at = &value["at"];
                let file = ["file", "fileName", "filename"]
                    .iter()
                    .find_map(|k| at.get(*k).map(yaml_text));
                let line = ["line", "lineNumber"]
                    .iter()
                    .find_map(|k| at.get(*k).and_then(serde_yaml::Value::as_u64));
                file.map(|f| (f, line.and_then(|l| u32::try_from(l).ok())))
            }
            Some(other) => Some(place_of(&yaml_text(other))),
            None => None,
        }
        .or_else(|| text("location").map(|l| place_of(&l)));
        if let Some((file, line)) = place {
            // The failing assertion's line, when the stack shows one in the same file,
            // is nearer the failure than the test's own (node's `location`).
            let line = stack.as_deref().and_then(|s| line_in(s, &file)).or(line);
            self.file = Some(file);
            self.line = line;
        }
    }
}

/// A YAML value as text: a string as it is, anything else as YAML.
fn yaml_text(value: &serde_yaml::Value) -> String {
    match value {
        serde_yaml::Value::String(s) => s.clone(),
        other => serde_yaml::to_string(other)
            .unwrap_or_default()
            .trim_end()
            .to_owned(),
    }
}

/// `/abs/file.test.js:12:3` (or `file:///…`, without a column, or a stack frame's
/// `fn (file.js:12:3)`) as file and line.
fn place_of(text: &str) -> (String, Option<u32>) {
    let text = text.trim();
    let text = match text.rsplit_once('(') {
        Some((_, inner)) if inner.ends_with(')') => inner.trim_end_matches(')'),
        _ => text,
    };
    let text = text.strip_prefix("file://").unwrap_or(text);
    let mut parts = text.rsplitn(3, ':');
    let last = parts.next().unwrap_or_default();
    let middle = parts.next();
    let first = parts.next();
    let number = |s: &str| s.parse::<u32>().ok();
    match (first, middle) {
        (Some(file), Some(line)) if number(line).is_some() && number(last).is_some() => {
            (file.to_owned(), number(line))
        }
        (_, Some(_)) if number(last).is_some() => {
            let (file, line) = text.rsplit_once(':').unwrap_or((text, ""));
            (file.to_owned(), number(line))
        }
        _ => (text.to_owned(), None),
    }
}

/// The line of the first frame in `stack` in `file`.
fn line_in(stack: &str, file: &str) -> Option<u32> {
    let needle = format!("{file}:");
    let at = stack.find(&needle)? + needle.len();
    let digits: String = stack[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .take(9)
        .collect();
    digits.parse().ok()
}
