//! Carrying a planned publication out: showing it (a dry run), writing the Actions
//! files, and sending the comment and the check run.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use super::*;

impl Publication {
    /// What `--dry-run` prints: each write, then what it writes.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for note in &self.notes {
            let _ = writeln!(out, "=== note: {note}");
        }
        if let Some((path, markdown)) = &self.summary {
            let _ = writeln!(
                out,
                "=== job summary: append {} bytes to {}",
                markdown.len(),
                path.display()
            );
            out.push_str(markdown);
        }
        for (name, value) in &self.outputs {
            let _ = writeln!(out, "=== step output: {name}={value}");
        }
        if let Some(comment) = &self.comment {
            if let Some(reason) = &comment.only_update {
                let _ = writeln!(
                    out,
                    "=== PR comment: only an existing comment is updated; none is created ({reason})"
                );
            }
            let _ = writeln!(
                out,
                "=== PR comment on {}#{}: POST /repos/{}/issues/{}/comments, or PATCH our comment \
                 (first line {}) if its body differs; {} characters",
                comment.repository,
                comment.pr,
                comment.repository,
                comment.pr,
                comment.marker,
                comment.body.chars().count()
            );
            out.push_str(&comment.body);
        }
        if let Some(check_run) = &self.check_run {
            for request in check_run.requests() {
                let _ = writeln!(
                    out,
                    "=== check run: {} {}\n{}",
                    request.method,
                    request.path,
                    serde_json::to_string_pretty(&request.body).unwrap_or_default()
                );
            }
        }
        out
    }

    /// Writes the publication.
    pub fn apply(&self) -> Result<(), PublishError> {
        if let Some((path, markdown)) = &self.summary {
            append(path, markdown.as_bytes(), "the job summary")?;
        }
        if let Some(path) = &self.output_file {
            let mut lines = String::new();
            for (name, value) in &self.outputs {
                output_line(&mut lines, name, value);
            }
            append(path, lines.as_bytes(), "$GITHUB_OUTPUT")?;
        }
        Ok(())
    }

    /// Writes the job summary in place of a comment or check run GitHub refused;
    /// the file written, if there was one to write.
    pub fn apply_fallback(&self) -> Result<Option<&Path>, PublishError> {
        match &self.fallback_summary {
            Some((path, markdown)) => {
                append(path, markdown.as_bytes(), "the job summary")?;
                Ok(Some(path))
            }
            None => Ok(None),
        }
    }
}

/// What publishing to GitHub did.
#[derive(Debug, Default)]
pub struct Sent {
    /// One line per target that was published.
    pub done: Vec<String>,
    /// GitHub refused the token (403 or 404): read-only, or a missing permission.
    pub denied: Vec<ApiError>,
    /// Every other failure, after retries.
    pub failed: Vec<ApiError>,
    /// Step outputs known once sent: `comment-url`, `check-run-url`.
    pub outputs: Vec<(String, String)>,
}

impl Sent {
    /// Appends [`Sent::outputs`] to `$GITHUB_OUTPUT`, when there is one.
    pub fn write_outputs(&self, file: Option<&Path>) -> Result<(), PublishError> {
        let Some(path) = file.filter(|_| !self.outputs.is_empty()) else {
            return Ok(());
        };
        let mut lines = String::new();
        for (name, value) in &self.outputs {
            output_line(&mut lines, name, value);
        }
        append(path, lines.as_bytes(), "$GITHUB_OUTPUT")
    }
}

impl Publication {
    /// Sends the comment and the check run. A failure of one does not stop the other.
    pub async fn send(&self, gh: &GitHub) -> Sent {
        let mut sent = Sent::default();
        let mut urls = Vec::new();
        let mut record = |result: Result<String, ApiError>| match result {
            Ok(line) => sent.done.push(line),
            Err(e @ ApiError::Denied { .. }) => sent.denied.push(e),
            Err(e) => sent.failed.push(e),
        };
        if let Some(plan) = &self.comment {
            record(comment::publish(gh, plan).await.map(|outcome| {
                let target = format!("PR comment on {}#{}", plan.repository, plan.pr);
                if let CommentOutcome::Created { url, .. }
                | CommentOutcome::Updated { url, .. }
                | CommentOutcome::Unchanged { url, .. } = &outcome
                    && !url.is_empty()
                {
                    urls.push(("comment-url".to_owned(), url.clone()));
                }
                match outcome {
                    CommentOutcome::Created { url, removed } => {
                        described(format!("{target} created"), &url, removed)
                    }
                    CommentOutcome::Updated { url, removed } => {
                        described(format!("{target} updated"), &url, removed)
                    }
                    CommentOutcome::Unchanged { url, removed } => {
                        described(format!("{target} unchanged, not rewritten"), &url, removed)
                    }
                    CommentOutcome::Skipped(reason) => format!("{target} not posted: {reason}"),
                }
            }));
        }
        if let Some(plan) = &self.check_run {
            record(check_run::publish(gh, plan).await.map(|outcome| {
                let mut line = format!(
                    "check run \"{}\" on {} ({}, {} request{})",
                    plan.name,
                    plan.head_sha,
                    plan.conclusion.unwrap_or("in progress"),
                    outcome.requests,
                    plural(outcome.requests, "", "s")
                );
                if !outcome.url.is_empty() {
                    line.push_str(&format!(": {}", outcome.url));
                    urls.push(("check-run-url".to_owned(), outcome.url.clone()));
                }
                line
            }));
        }
        sent.outputs = urls;
        sent
    }
}

fn described(mut line: String, url: &str, removed: usize) -> String {
    if !url.is_empty() {
        line.push_str(&format!(": {url}"));
    }
    if removed > 0 {
        line.push_str(&format!(
            " ({removed} duplicate{} removed)",
            plural(removed, "", "s")
        ));
    }
    line
}

fn append(path: &Path, bytes: &[u8], what: &'static str) -> Result<(), PublishError> {
    let write_err = |source| PublishError::Write {
        what,
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(write_err)?;
    file.write_all(bytes).map_err(write_err)
}

/// One `$GITHUB_OUTPUT` entry; a value with a line break takes the delimited form.
fn output_line(out: &mut String, name: &str, value: &str) {
    if value.contains(['\n', '\r']) {
        let mut delimiter = "VERIFY_MATRIX_EOF".to_owned();
        while value.contains(&delimiter) {
            delimiter.push('_');
        }
        let _ = writeln!(out, "{name}<<{delimiter}\n{value}\n{delimiter}");
    } else {
        let _ = writeln!(out, "{name}={value}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_values_with_line_breaks_are_delimited() {
        let mut out = String::new();
        output_line(&mut out, "verdict", "VERIFIED");
        output_line(&mut out, "report", "a\nVERIFY_MATRIX_EOF");
        assert_eq!(
            out,
            "verdict=VERIFIED\nreport<<VERIFY_MATRIX_EOF_\na\nVERIFY_MATRIX_EOF\nVERIFY_MATRIX_EOF_\n"
        );
    }
}
