//! GitHub's own OpenAPI description of its REST API (from the npm package
//! `@octokit/openapi`, which `scripts/test.sh` fetches), as a contract every request a
//! test records must meet: the path and method exist, each query parameter is declared,
//! and the JSON body validates against the operation's schema with no undeclared key.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::Value;

/// Where `scripts/test.sh` puts the description (`GITHUB_OPENAPI` overrides).
fn description_path() -> PathBuf {
    std::env::var_os("GITHUB_OPENAPI").map_or_else(
        || crate::common::repo_root().join("target/github-openapi/api.github.com.json"),
        PathBuf::from,
    )
}

fn description() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| {
        let path = description_path();
        let text = std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "GitHub's OpenAPI description is needed at {} ({e}); scripts/test.sh fetches it",
                path.display()
            )
        });
        serde_json::from_slice(&text).expect("the description is JSON")
    })
}

/// The description's path template that `path` (after any API prefix) matches.
fn template_for(path: &str) -> Option<(&'static str, &'static Value)> {
    let paths = description()["paths"].as_object()?;
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    paths.iter().find_map(|(template, item)| {
        let pattern: Vec<&str> = template.trim_start_matches('/').split('/').collect();
        let matches = pattern.len() == parts.len()
            && pattern
                .iter()
                .zip(&parts)
                .all(|(p, s)| (p.starts_with('{') && p.ends_with('}') && !s.is_empty()) || p == s);
        matches.then_some((template.as_str(), item))
    })
}

/// `#/components/...` references resolved against the description.
fn resolve(schema: &Value) -> &Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(pointer) => resolve(
            description()
                .pointer(pointer.trim_start_matches('#'))
                .unwrap_or_else(|| panic!("dangling reference {pointer}")),
        ),
        None => schema,
    }
}

/// Keys of `value` that `schema` does not declare, as JSON paths.
fn undeclared(value: &Value, schema: &Value, at: &str, out: &mut Vec<String>) {
    let schema = resolve(schema);
    let mut variants = vec![schema];
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(list) = schema.get(key).and_then(Value::as_array) {
            variants.extend(list.iter().map(resolve));
        }
    }
    match value {
        Value::Object(map) => {
            for (key, field) in map {
                let declared = variants
                    .iter()
                    .find_map(|v| v.get("properties").and_then(|p| p.get(key)));
                match declared {
                    Some(field_schema) => {
                        undeclared(field, field_schema, &format!("{at}.{key}"), out)
                    }
                    None if variants.iter().any(|v| v.get("properties").is_some()) => {
                        out.push(format!("{at}.{key}"));
                    }
                    None => {}
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = variants.iter().find_map(|v| v.get("items")) {
                for (i, item) in items.iter().enumerate() {
                    undeclared(item, item_schema, &format!("{at}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

/// Fails the test unless the request is one GitHub's REST API documents. `path` is
/// the request's path below the API root.
pub fn check_request(method: &str, path: &str, query: Option<&str>, body: &Value) {
    let (template, item) = template_for(path)
        .unwrap_or_else(|| panic!("{method} {path}: no such path in GitHub's REST API"));
    let operation = item
        .get(method.to_ascii_lowercase())
        .unwrap_or_else(|| panic!("{method} {path}: GitHub documents no {method} on {template}"));
    let declared: Vec<&str> = operation
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(resolve)
        .filter(|p| p["in"] == "query")
        .filter_map(|p| p["name"].as_str())
        .collect();
    for pair in query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let name = pair.split('=').next().unwrap_or_default();
        assert!(
            declared.contains(&name),
            "{method} {path}: query parameter `{name}` is not one of {declared:?}"
        );
    }
    let schema = operation.pointer("/requestBody/content/application~1json/schema");
    match (schema, body) {
        (None, Value::Null) => {}
        (None, _) => panic!("{method} {template} takes no JSON body, but one was sent: {body}"),
        (Some(_), Value::Null)
            if !operation
                .pointer("/requestBody/required")
                .and_then(Value::as_bool)
                .unwrap_or(false) => {}
        (Some(schema), body) => {
            // The schema with the description's components beside it, so that its
            // `#/components/...` references resolve.
            let mut root = resolve(schema).clone();
            root["components"] = description()["components"].clone();
            let validator = jsonschema::draft4::new(&root)
                .unwrap_or_else(|e| panic!("{method} {template}: unusable schema: {e}"));
            let errors: Vec<String> = validator
                .iter_errors(body)
                .map(|e| format!("{} at {}", e, e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{method} {template}: {errors:?}\n{body}");
            let mut extra = Vec::new();
            undeclared(body, schema, "body", &mut extra);
            assert!(
                extra.is_empty(),
                "{method} {template}: keys GitHub does not document: {extra:?}"
            );
        }
    }
}
