//! The manifest's JSON Schema, generated from the serde types that parse it
//! ([`super::raw`]), for editors: the YAML language server completes keys, shows the doc
//! comments as hover text and flags unknown keys as the parser would.
//!
//! The schema describes the shape; some rules only validation knows (one kind per check,
//! ids unique, environment names that exist) are not in it.

use schemars::generate::SchemaSettings;
use serde_json::Value;

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

use super::raw::{EnvSelector, EnvValue, RawDuration, RawManifest, RawPaths, RawPercent};

/// The JSON Schema (draft-07, which editors support best) of `verify-matrix.yml`.
pub fn json_schema() -> Value {
    let generator = SchemaSettings::draft07().into_generator();
    let schema = generator.into_root_schema_for::<RawManifest>();
    let mut value = schema.to_value();
    if let Some(object) = value.as_object_mut() {
        object.insert(
            "title".to_owned(),
            Value::from("verify-matrix.yml (cargo verify-matrix manifest, version 1)"),
        );
    }
    value
}

// The schemas of the types that parse by hand.

impl JsonSchema for RawDuration {
    fn schema_name() -> Cow<'static, str> {
        "Duration".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A duration such as \"90s\", \"10m\" or \"1h 30m\", or a number of seconds.",
            "anyOf": [
                { "type": "string", "minLength": 1 },
                { "type": "integer", "minimum": 0 }
            ]
        })
    }
}

impl JsonSchema for EnvSelector {
    fn schema_name() -> Cow<'static, str> {
        "EnvironmentSelector".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "`ALL`, an environment name, or a list of environment names.",
            "anyOf": [
                { "type": "string" },
                { "type": "array", "items": { "type": "string" } }
            ]
        })
    }
}

impl JsonSchema for RawPaths {
    fn schema_name() -> Cow<'static, str> {
        "ReportPaths".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let formats: Vec<&str> = super::ReportFormat::ALL
            .iter()
            .map(|f| f.as_str())
            .collect();
        let one = json_schema!({
            "anyOf": [
                { "type": "string", "minLength": 1 },
                {
                    "type": "object",
                    "properties": {
                        "path": { "type": "string", "minLength": 1, "description": "A path or glob, relative to the check's folder." },
                        "format": { "enum": formats, "description": "The format the files are read in, whatever their content looks like." }
                    },
                    "required": ["path"],
                    "additionalProperties": false
                }
            ]
        });
        json_schema!({
            "description": "A path or glob, or a list of them, relative to the check's folder; each may be `{ path, format }` to name the format it is read in.",
            "anyOf": [
                one.clone(),
                { "type": "array", "items": one, "minItems": 1 }
            ]
        })
    }
}

impl JsonSchema for RawPercent {
    fn schema_name() -> Cow<'static, str> {
        "Percent".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A percentage from 0 to 100: \"5%\" or 5.",
            "anyOf": [
                { "type": "string", "pattern": "^\\s*[0-9]+(\\.[0-9]+)?\\s*%?\\s*$" },
                { "type": "number", "minimum": 0, "maximum": 100 }
            ]
        })
    }
}

impl JsonSchema for EnvValue {
    fn schema_name() -> Cow<'static, str> {
        "EnvValue".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A variable's value; numbers and booleans are taken as their text.",
            "type": ["string", "number", "boolean"]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_names_every_top_level_key_and_refuses_others() {
        let schema = json_schema();
        let properties = schema["properties"].as_object().unwrap();
        let keys: Vec<&str> = properties.keys().map(String::as_str).collect();
        let mut expected = super::super::raw::TOP_LEVEL_KEYS.to_vec();
        expected.sort_unstable();
        let mut keys = keys;
        keys.sort_unstable();
        assert_eq!(keys, expected);
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(
            schema["required"],
            serde_json::json!(["version", "environments"])
        );
    }

    #[test]
    fn check_keys_are_kebab_case_with_descriptions() {
        let schema = json_schema();
        let check = &schema["definitions"]["RawCheck"]["properties"];
        for key in [
            "not-file",
            "git-clean",
            "all-of",
            "must-be-effective",
            "exit-code",
        ] {
            let description = check[key]["description"].as_str().unwrap_or_default();
            assert!(!description.is_empty(), "{key} has a description");
        }
        assert!(check.get("not_file").is_none());
    }
}
