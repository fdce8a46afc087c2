//! Where each key and value of a YAML manifest sits in the file.
//!
//! serde_yaml reports positions only for syntax and type errors. Problems found later
//! (a duplicate id, an undeclared environment) still need `file:line:col`, so the same
//! text is also read as a stream of positioned events (yaml-rust2) and turned into a
//! map from key path (`checks[2].timeout`, the spelling serde_path_to_error uses) to
//! position.

use std::collections::HashMap;

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// A 1-based line and column, and how many characters to underline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
    pub len: usize,
}

/// The position of one node: its value and, inside a mapping, its key.
#[derive(Debug, Clone, Copy, Default)]
pub struct Span {
    pub key: Option<Pos>,
    pub value: Pos,
}

/// Key path → position, for one manifest text.
#[derive(Debug, Clone, Default)]
pub struct Spans {
    map: HashMap<String, Span>,
    /// Keys that appear twice in one mapping: the path and the second occurrence.
    duplicates: Vec<(String, Pos)>,
    /// Where a second YAML document starts, if there is one.
    pub second_document: Option<Pos>,
    /// The first alias (`*name`).
    pub first_alias: Option<Pos>,
    /// The first mapping key that is a list or a mapping.
    pub complex_key: Option<Pos>,
}

impl Spans {
    /// Reads `text` as YAML events. A text that does not parse gives an empty map: the
    /// syntax error itself is reported by the loader, with serde_yaml's position.
    pub fn from_yaml(text: &str) -> Spans {
        let mut builder = Builder::default();
        // Tabs become spaces: libyaml (serde_yaml) accepts a tab after `key:` where
        // yaml-rust2 stops, and a space keeps every column where it was.
        let text = text.replace('\t', " ");
        let mut parser = Parser::new_from_str(&text);
        // A parse error is reported elsewhere; keep what was mapped up to it.
        let _ = parser.load(&mut builder, true);
        Spans {
            map: builder.map,
            duplicates: builder.duplicates,
            second_document: builder.second_document,
            first_alias: builder.first_alias,
            complex_key: builder.complex_key,
        }
    }

    /// The first key that appears twice in one mapping, and where its repeat is.
    pub fn first_duplicate(&self) -> Option<(&str, Pos)> {
        self.duplicates
            .first()
            .map(|(path, pos)| (path.as_str(), *pos))
    }

    /// The span recorded for `path`, if the path exists in the text.
    pub fn get(&self, path: &str) -> Option<Span> {
        self.map.get(path).copied()
    }

    /// The best position to point at for `path`: its value, else the nearest ancestor
    /// that exists (a missing key is reported at the mapping that lacks it).
    pub fn locate(&self, path: &str) -> Option<Pos> {
        let mut current = path.to_owned();
        loop {
            if let Some(span) = self.map.get(&current) {
                return Some(span.value);
            }
            current = parent_path(&current)?;
        }
    }

    /// The position of the key itself (for unknown or duplicate keys), else [`Self::locate`].
    pub fn locate_key(&self, path: &str) -> Option<Pos> {
        match self.map.get(path) {
            Some(Span { key: Some(key), .. }) => Some(*key),
            _ => self.locate(path),
        }
    }
}

/// `checks[2].timeout` → `checks[2]` → `checks` → `` (the document).
fn parent_path(path: &str) -> Option<String> {
    if path.is_empty() {
        return None;
    }
    if path.ends_with(']') {
        let open = path.rfind('[')?;
        return Some(path[..open].to_owned());
    }
    match path.rfind(['.', '[']) {
        Some(i) if path.as_bytes()[i] == b'.' => Some(path[..i].to_owned()),
        Some(i) => Some(path[..i].to_owned()),
        None => Some(String::new()),
    }
}

/// Joins a child segment onto a path the way serde_path_to_error displays paths.
pub fn join_key(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

/// Joins a sequence index onto a path.
pub fn join_index(parent: &str, index: usize) -> String {
    format!("{parent}[{index}]")
}

enum Frame {
    Mapping {
        path: String,
        pending_key: Option<(String, Pos)>,
        seen_key: bool,
    },
    Sequence {
        path: String,
        next: usize,
    },
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    map: HashMap<String, Span>,
    duplicates: Vec<(String, Pos)>,
    documents: usize,
    second_document: Option<Pos>,
    first_alias: Option<Pos>,
    complex_key: Option<Pos>,
}

fn pos(mark: Marker, len: usize) -> Pos {
    // yaml-rust2 counts columns from 0 in practice; people count from 1.
    Pos {
        line: mark.line(),
        col: mark.col() + 1,
        len: len.max(1),
    }
}

impl Builder {
    /// Records a node that starts at `value` and returns its path, or `None` when the
    /// node is a mapping key (recorded as pending instead).
    fn node(&mut self, value: Pos, key_text: Option<&str>) -> Option<String> {
        match self.stack.last_mut() {
            None => {
                self.map.insert(String::new(), Span { key: None, value });
                Some(String::new())
            }
            Some(Frame::Sequence { path, next }) => {
                let child = join_index(path, *next);
                *next += 1;
                self.map.insert(child.clone(), Span { key: None, value });
                Some(child)
            }
            Some(Frame::Mapping {
                path,
                pending_key,
                seen_key,
            }) => match pending_key.take() {
                Some((key, key_pos)) => {
                    let child = join_key(path, &key);
                    let span = Span {
                        key: Some(key_pos),
                        value,
                    };
                    if self.map.contains_key(&child) {
                        self.duplicates.push((child.clone(), key_pos));
                    } else {
                        self.map.insert(child.clone(), span);
                    }
                    Some(child)
                }
                None => {
                    // A block mapping is reported where its first key is, not at the
                    // parser's mark (after that key's colon).
                    if !*seen_key {
                        *seen_key = true;
                        if let Some(span) = self.map.get_mut(path.as_str())
                            && (value.line, value.col) < (span.value.line, span.value.col)
                        {
                            span.value = Pos { len: 1, ..value };
                        }
                    }
                    // Keys that are not plain scalars (a mapping as a key) have no path.
                    *pending_key = Some((key_text.unwrap_or("?").to_owned(), value));
                    None
                }
            },
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        if let Event::DocumentStart = ev {
            self.documents += 1;
            if self.documents == 2 {
                self.second_document = Some(pos(mark, 3));
            }
        }
        // Only the first document is mapped.
        if self.documents > 1 {
            return;
        }
        match ev {
            Event::Scalar(text, style, ..) => {
                let quoted = matches!(
                    style,
                    TScalarStyle::SingleQuoted | TScalarStyle::DoubleQuoted
                );
                let len = text.chars().count() + if quoted { 2 } else { 0 };
                let first_line_len = if text.contains('\n') { 1 } else { len };
                self.node(pos(mark, first_line_len), Some(&text));
            }
            Event::Alias(_) => {
                self.first_alias.get_or_insert(pos(mark, 1));
                self.node(pos(mark, 1), Some("*"));
            }
            Event::MappingStart(..) => {
                let path = self.node(pos(mark, 1), None);
                if path.is_none() {
                    self.complex_key.get_or_insert(pos(mark, 1));
                }
                let path = path.unwrap_or_default();
                self.stack.push(Frame::Mapping {
                    path,
                    pending_key: None,
                    seen_key: false,
                });
            }
            Event::SequenceStart(..) => {
                let path = self.node(pos(mark, 1), None);
                if path.is_none() {
                    self.complex_key.get_or_insert(pos(mark, 1));
                }
                let path = path.unwrap_or_default();
                self.stack.push(Frame::Sequence { path, next: 0 });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.stack.pop();
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "version: 1\nenvironments:\n  - name: linux\nchecks:\n  - id: a\n    run: \"true\"\n    timeout: 0s\n";

    #[test]
    fn maps_keys_and_values_to_lines_and_columns() {
        let spans = Spans::from_yaml(TEXT);
        let timeout = spans.get("checks[0].timeout").unwrap();
        assert_eq!(
            timeout.key.unwrap(),
            Pos {
                line: 7,
                col: 5,
                len: 7
            }
        );
        assert_eq!(
            timeout.value,
            Pos {
                line: 7,
                col: 14,
                len: 2
            }
        );
        let run = spans.get("checks[0].run").unwrap();
        assert_eq!(
            run.value,
            Pos {
                line: 6,
                col: 10,
                len: 6
            }
        );
        assert_eq!(spans.get("environments[0].name").unwrap().value.line, 3);
    }

    #[test]
    fn a_missing_path_falls_back_to_its_nearest_ancestor() {
        let spans = Spans::from_yaml(TEXT);
        assert_eq!(
            spans.locate("checks[0].nope").unwrap(),
            Pos {
                line: 5,
                col: 5,
                len: 1
            }
        );
        assert_eq!(spans.locate("checks[0]").unwrap().line, 5);
        assert!(spans.locate("").is_some());
    }

    #[test]
    fn records_duplicate_keys() {
        let spans = Spans::from_yaml("a: 1\nb: 2\na: 3\n");
        assert_eq!(
            spans.first_duplicate(),
            Some((
                "a",
                Pos {
                    line: 3,
                    col: 1,
                    len: 1
                }
            ))
        );
    }

    #[test]
    fn parent_paths() {
        assert_eq!(parent_path("checks[2].timeout").unwrap(), "checks[2]");
        assert_eq!(parent_path("checks[2]").unwrap(), "checks");
        assert_eq!(parent_path("checks").unwrap(), "");
        assert_eq!(parent_path(""), None);
    }
}
