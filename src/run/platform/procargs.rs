//! macOS's `KERN_PROCARGS2`: a process's arguments and environment as the kernel keeps
//! them. Parsed here on every system, so that the parsing is tested wherever the tests
//! run; read from the kernel only on macOS.
//!
//! The layout: `argc` (a native-endian 32-bit integer), the executable's path and its
//! terminating NUL, NUL padding, then `argc` NUL-terminated arguments, then the
//! environment's `NAME=value` strings, NUL-terminated, up to an empty string or the end.

/// A process's arguments and environment.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ProcArgs {
    pub args: Vec<String>,
    pub env: Vec<String>,
}

impl ProcArgs {
    /// The value of `name` in the environment.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.env.iter().find_map(|entry| {
            entry
                .strip_prefix(name)
                .and_then(|rest| rest.strip_prefix('='))
        })
    }
}

/// Parses a `KERN_PROCARGS2` buffer; `None` when it is too short to hold `argc`.
pub fn parse(buf: &[u8]) -> Option<ProcArgs> {
    let argc = i32::from_ne_bytes(buf.get(..4)?.try_into().ok()?);
    let argc = usize::try_from(argc).ok()?;
    let mut rest = &buf[4..];
    // The executable's path, then the padding before the first argument.
    let path_end = rest.iter().position(|b| *b == 0).unwrap_or(rest.len());
    rest = &rest[path_end..];
    let start = rest.iter().position(|b| *b != 0).unwrap_or(rest.len());
    rest = &rest[start..];
    // The NULs the buffer ends with hold no strings.
    let end = rest.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
    rest = &rest[..end];
    let mut strings = rest.split(|b| *b == 0);
    let mut out = ProcArgs::default();
    for _ in 0..argc {
        match strings.next() {
            Some(arg) => out.args.push(String::from_utf8_lossy(arg).into_owned()),
            None => return Some(out),
        }
    }
    for entry in strings {
        if entry.is_empty() {
            break;
        }
        out.env.push(String::from_utf8_lossy(entry).into_owned());
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A buffer as the kernel writes it.
    fn buffer(path: &str, args: &[&str], env: &[&str], padding: usize) -> Vec<u8> {
        let mut buf = (args.len() as i32).to_ne_bytes().to_vec();
        buf.extend_from_slice(path.as_bytes());
        buf.extend(std::iter::repeat_n(0u8, 1 + padding));
        for s in args.iter().chain(env) {
            buf.extend_from_slice(s.as_bytes());
            buf.push(0);
        }
        buf.extend_from_slice(&[0, 0, 0]);
        buf
    }

    #[test]
    fn arguments_and_environment_are_read_past_the_padding() {
        let buf = buffer(
            "/bin/sleep",
            &["sleep", "60"],
            &["HOME=/Users/a", "VERIFY_MATRIX_TOKEN=12-34-5", "EMPTY="],
            7,
        );
        let parsed = parse(&buf).unwrap();
        assert_eq!(parsed.args, ["sleep", "60"]);
        assert_eq!(parsed.var("VERIFY_MATRIX_TOKEN"), Some("12-34-5"));
        assert_eq!(parsed.var("EMPTY"), Some(""));
        assert_eq!(parsed.var("HOME"), Some("/Users/a"));
        // A name that is only a prefix of another is not it.
        assert_eq!(parsed.var("VERIFY_MATRIX"), None);
    }

    #[test]
    fn short_cut_and_odd_buffers_are_never_a_panic() {
        assert_eq!(parse(&[1, 0]), None);
        assert_eq!(parse(&(-1i32).to_ne_bytes()), None);
        // Cut inside the arguments: what is there is kept.
        let buf = buffer("/bin/sh", &["sh", "-c", "x"], &[], 0);
        let cut = parse(&buf[..buf.len() - 6]).unwrap();
        assert_eq!(cut.args[0], "sh");
        // More arguments claimed than present: none is made up.
        let mut lying = buffer("/bin/sh", &["sh"], &[], 0);
        lying[..4].copy_from_slice(&9i32.to_ne_bytes());
        assert_eq!(parse(&lying).unwrap().args, ["sh"]);
        // No path, no padding, nothing after argc.
        assert_eq!(parse(&0i32.to_ne_bytes()).unwrap(), ProcArgs::default());
    }
}
