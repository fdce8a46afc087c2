use super::*;

#[test]
fn transient_patterns() {
    for text in [
        "curl: (7) Failed to connect: Connection refused",
        "error: could not resolve host: github.com",
        "Blocking waiting for file lock on package cache",
        "HTTP 503",
        "502 Bad Gateway",
        "API rate limit exceeded",
        "read ECONNRESET",
    ] {
        assert!(TRANSIENT.is_match(text), "{text}");
    }
    for text in [
        "test result: FAILED. 1 passed; 1 failed",
        "error[E0308]: mismatched types",
        "exit 1",
    ] {
        assert!(!TRANSIENT.is_match(text), "{text}");
    }
}
