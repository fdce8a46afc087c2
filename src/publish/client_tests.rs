use super::super::response::{Attempt, classify};
use super::*;
use http::StatusCode;
use http::header::HeaderMap;
use std::time::{Duration, UNIX_EPOCH};

fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (k, v) in pairs {
        map.insert(*k, v.parse().unwrap());
    }
    map
}

fn wait_of(c: Attempt) -> Option<Duration> {
    match c {
        Attempt::Retry { wait, .. } => wait,
        _ => panic!("not a retry"),
    }
}

#[test]
fn rate_limits_wait_as_the_response_asks() {
    let now = UNIX_EPOCH + Duration::from_secs(1_000);
    let c = classify(
        StatusCode::TOO_MANY_REQUESTS,
        &headers(&[("retry-after", "7")]),
        "{}",
        "x",
        now,
    );
    assert_eq!(wait_of(c), Some(Duration::from_secs(7)));
    let c = classify(
        StatusCode::FORBIDDEN,
        &headers(&[
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset", "1030"),
        ]),
        r#"{"message":"API rate limit exceeded"}"#,
        "x",
        now,
    );
    assert_eq!(wait_of(c), Some(Duration::from_secs(31)));
    let c = classify(
        StatusCode::FORBIDDEN,
        &HeaderMap::new(),
        r#"{"message":"You have exceeded a secondary rate limit."}"#,
        "x",
        now,
    );
    assert_eq!(wait_of(c), Some(Duration::from_secs(60)));
}

#[test]
fn a_plain_403_is_denied_and_a_422_fails() {
    let c = classify(
        StatusCode::FORBIDDEN,
        &HeaderMap::new(),
        r#"{"message":"Resource not accessible by integration"}"#,
        "creating the comment",
        UNIX_EPOCH,
    );
    assert!(matches!(
        c,
        Attempt::Fatal(ApiError::Denied { status: 403, ref message, .. })
            if message == "Resource not accessible by integration"
    ));
    let c = classify(
        StatusCode::UNPROCESSABLE_ENTITY,
        &HeaderMap::new(),
        r#"{"message":"Validation Failed","errors":[{"code":"invalid"},"body is too long"]}"#,
        "x",
        UNIX_EPOCH,
    );
    assert!(matches!(
        c,
        Attempt::Fatal(ApiError::Failed { ref message, .. })
            if message == "422 Validation Failed (invalid; body is too long)"
    ));
}

#[test]
fn tokens_are_checked_and_redacted() {
    assert!(Token::new("a b").is_err());
    assert!(Token::new("  \n").is_err());
    let token = Token::new(" ghs_abc\n").unwrap();
    assert_eq!(format!("{token:?}"), "Token(***)");
    assert_eq!(token.redact("x ghs_abc y"), "x *** y");
    // As a URL or a form carries it.
    let token = Token::new("glpat-a.b_c").unwrap();
    assert_eq!(
        token.redact("token=glpat%2Da%2Eb%5Fc and glpat%2da%2eb%5fc"),
        "token=*** and ***"
    );
}

#[test]
fn a_token_is_masked_however_its_characters_are_percent_encoded() {
    let token = Token::new("glpat-Secr3t_TOKEN-xyzABC").unwrap();
    for shown in [
        "echo glpat-Secr3t_TOKEN-xyzABC",
        "echo glpat%2DSecr3t%5FTOKEN%2DxyzABC",
        "echo glpat%2dSecr3t%5fTOKEN%2dxyzABC",
        "echo %67%6c%70%61%74%2d%53%65%63%72%33%74%5f%54%4f%4b%45%4e%2d%78%79%7a%41%42%43",
        "echo %67%6C%70%61%74-Secr3t%5f%54OKEN%2dxyzABC",
    ] {
        assert_eq!(token.redact(shown), "echo ***", "{shown}");
    }
    // Text around it, other escapes and characters beyond ASCII are kept.
    assert_eq!(
        token.redact("é%20glpat%2dSecr3t_TOKEN-xyzABC%2x and %"),
        "é%20***%2x and %"
    );
    assert_eq!(token.redact("glpat%2dSecr3t"), "glpat%2dSecr3t");
}
