//! Commands without a shell (`shell: none`): splitting into words, and spotting shell
//! syntax that would silently mean something else when no shell interprets it.

/// The first piece of shell syntax in `cmd` outside single quotes, if any: `$(`, a
/// backtick, `|`, `||`, `&`, `&&`, `;`, `<` or `>`. Inside double quotes only `$(` and
/// backticks count, as a shell would still expand them there.
pub fn shell_syntax(cmd: &str) -> Option<&'static str> {
    let mut chars = cmd.chars().peekable();
    let (mut single, mut double) = (false, false);
    while let Some(c) = chars.next() {
        if single {
            single = c != '\'';
            continue;
        }
        let next = chars.peek().copied();
        let found = match c {
            '\\' => {
                chars.next();
                None
            }
            '\'' if !double => {
                single = true;
                None
            }
            '"' => {
                double = !double;
                None
            }
            '`' => Some("`"),
            '$' if next == Some('(') => Some("$("),
            _ if double => None,
            '|' if next == Some('|') => Some("||"),
            '|' => Some("|"),
            '&' if next == Some('&') => Some("&&"),
            '&' => Some("&"),
            ';' => Some(";"),
            '<' => Some("<"),
            '>' => Some(">"),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Splits `cmd` into words with POSIX quoting rules (no expansion of any kind).
pub fn split(cmd: &str) -> Result<Vec<String>, shell_words::ParseError> {
    shell_words::split(cmd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_operators_outside_quotes() {
        assert_eq!(shell_syntax("a | b"), Some("|"));
        assert_eq!(shell_syntax("a || b"), Some("||"));
        assert_eq!(shell_syntax("a && b"), Some("&&"));
        assert_eq!(shell_syntax("a; b"), Some(";"));
        assert_eq!(shell_syntax("a > f"), Some(">"));
        assert_eq!(shell_syntax("a < f"), Some("<"));
        assert_eq!(shell_syntax("echo $(date)"), Some("$("));
        assert_eq!(shell_syntax("echo `date`"), Some("`"));
        assert_eq!(shell_syntax("echo \"$(date)\""), Some("$("));
    }

    #[test]
    fn ignores_quoted_text() {
        assert_eq!(shell_syntax("grep -- '|' file"), None);
        assert_eq!(shell_syntax("echo \"a > b; c\""), None);
        assert_eq!(shell_syntax("echo 'it''s $(fine)'"), None);
        assert_eq!(shell_syntax(r"echo a\;b"), None);
        assert_eq!(shell_syntax("cargo test --workspace"), None);
    }

    #[test]
    fn splits_words() {
        assert_eq!(split("a 'b c' \"d\"").unwrap(), ["a", "b c", "d"]);
        assert!(split("a 'b").is_err());
    }
}
