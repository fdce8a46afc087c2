//! Making untrusted text safe for markdown.

/// Escapes text for a markdown table cell or line: no table breaks, no HTML, no code
/// spans, no `@mentions`.
pub fn escape_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '`' => out.push_str("\\`"),
            '*' | '[' | ']' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '@' => out.push_str("&#64;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A commit id as people read it: its first 7 characters.
pub fn short_commit(sha: &str) -> &str {
    sha.char_indices()
        .nth(7)
        .map_or(sha, |(end, _)| &sha[..end])
}

/// Escapes text for HTML element content and attribute values.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A code fence longer than any run of backticks inside `content` (at least three).
pub fn fence_for(content: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in content.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// `one` for one, `many` otherwise.
pub fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

pub use crate::results::counted;

/// The command that runs `row`'s check again in its environment on this machine (its
/// failed shard's slice, for a split check): `cargo verify-matrix run --env linux
/// --check unit`. Check ids and environment names are plain words, so it reads as is.
pub fn reproduce(row: &crate::results::Row) -> Option<String> {
    // A pair read from a report file (`report --files`) was run by the workflow's own
    // command, not by a manifest here.
    if row.detail.kind == crate::results::REPORTS_KIND {
        return None;
    }
    let shard = row.detail.sharded.as_ref().and_then(|s| {
        s.parts
            .iter()
            .find(|p| p.status != crate::results::Status::Pass)
            .map(|p| format!(" --shard {}", p.shard))
    });
    Some(format!(
        "cargo verify-matrix run --env {} --check {}{}",
        row.environment,
        row.check,
        shard.unwrap_or_default()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markdown_specials() {
        assert_eq!(
            escape_markdown("a|b <x> `c` @me"),
            "a\\|b &lt;x&gt; \\`c\\` &#64;me"
        );
    }

    #[test]
    fn escapes_html_specials() {
        assert_eq!(
            escape_html(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
    }

    #[test]
    fn fence_is_longer_than_content_runs() {
        assert_eq!(fence_for("plain"), "```");
        assert_eq!(fence_for("a ```` b"), "`````");
    }
}
