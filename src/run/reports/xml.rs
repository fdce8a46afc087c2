//! The XML reading the .NET readers (TRX, NUnit, xUnit.net) share: a stream of events
//! from quick-xml, never the whole document, with what every report from pull-request
//! code is held to — no DOCTYPE (so no entity is ever expanded), nesting bounded, an
//! unknown entity an error, a document cut short an error — said once here.

use std::borrow::Cow;
use std::io::BufRead;

use quick_xml::Reader;
use quick_xml::events::attributes::Attribute;
use quick_xml::events::{BytesStart, Event};

use super::{ReadError, seconds_to_ms};

/// The deepest element nesting read.
pub(super) const MAX_DEPTH: usize = 64;

/// The longest name kept from an attribute before the collector cuts it (bytes): enough
/// for any real name, bounded for a forged one.
pub(super) const MAX_KEPT_NAME_BYTES: usize = 4096;

/// What a reader does with the document's elements and text.
pub(super) trait Handler {
    /// An element opens. An empty element (`<a/>`) opens and then closes.
    fn open(&mut self, element: &BytesStart<'_>, at: u64) -> Result<(), ReadError>;
    /// The element named `name` (its local name) closes.
    fn close(&mut self, name: &[u8]) -> Result<(), ReadError>;
    /// Whether text here is kept: text nobody keeps is not decoded.
    fn wants_text(&self) -> bool;
    /// Text (entities resolved, CDATA as it is) inside the current element.
    fn text(&mut self, text: &str);
}

/// Reads `source` into `handler`. The root element must be one of `roots` (local
/// names), else the file is not a `kind` report.
pub(super) fn read(
    source: impl BufRead,
    roots: &[&str],
    kind: &str,
    handler: &mut impl Handler,
) -> Result<(), ReadError> {
    let mut reader = Reader::from_reader(source);
    reader.config_mut().trim_text(false);
    let mut buf = Vec::with_capacity(8 * 1024);
    let mut depth = 0usize;
    let mut root_seen = false;
    loop {
        let at = reader.buffer_position();
        let event = reader.read_event_into(&mut buf).map_err(|e| {
            ReadError::at_offset(format!("malformed XML: {e}"), reader.error_position())
        })?;
        match event {
            Event::DocType(_) => {
                return Err(ReadError::at_offset(
                    "a DOCTYPE is refused: a test report declares no entities",
                    at,
                ));
            }
            Event::Start(e) => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(ReadError::at_offset(
                        format!("elements nested deeper than {MAX_DEPTH}"),
                        at,
                    ));
                }
                root(&e, &mut root_seen, roots, kind, at)?;
                handler.open(&e, at)?;
            }
            Event::Empty(e) => {
                root(&e, &mut root_seen, roots, kind, at)?;
                handler.open(&e, at)?;
                handler.close(e.local_name().as_ref())?;
            }
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                handler.close(e.local_name().as_ref())?;
            }
            Event::Text(t) if handler.wants_text() => {
                let text = t
                    .xml10_content()
                    .map_err(|e| ReadError::at_offset(format!("{e}"), at))?;
                handler.text(&text);
            }
            Event::CData(t) if handler.wants_text() => {
                let text = t
                    .decode()
                    .map_err(|e| ReadError::at_offset(format!("{e}"), at))?;
                handler.text(&text);
            }
            Event::GeneralRef(r) => {
                // Resolved even where the text is not kept: an unknown entity is an
                // error wherever it is.
                let text = if let Some(c) = r
                    .resolve_char_ref()
                    .map_err(|e| ReadError::at_offset(format!("{e}"), at))?
                {
                    c.to_string()
                } else {
                    let name = r
                        .decode()
                        .map_err(|e| ReadError::at_offset(format!("{e}"), at))?;
                    quick_xml::escape::resolve_predefined_entity(&name)
                        .ok_or_else(|| {
                            ReadError::at_offset(format!("unknown entity `&{name};`"), at)
                        })?
                        .to_owned()
                };
                if handler.wants_text() {
                    handler.text(&text);
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if !root_seen {
        return Err(ReadError::new(format!(
            "no <{}> element",
            roots.join("> or <")
        )));
    }
    if depth > 0 {
        return Err(ReadError::new(
            "the report ends inside an element (cut short while being written?)",
        ));
    }
    Ok(())
}

/// The first element must be one of `roots`.
fn root(
    e: &BytesStart<'_>,
    seen: &mut bool,
    roots: &[&str],
    kind: &str,
    at: u64,
) -> Result<(), ReadError> {
    if *seen {
        return Ok(());
    }
    *seen = true;
    let name = e.local_name();
    if roots.iter().any(|r| r.as_bytes() == name.as_ref()) {
        return Ok(());
    }
    Err(ReadError::at_offset(
        format!(
            "not a {kind} report: the root element is <{}>",
            String::from_utf8_lossy(name.as_ref())
        ),
        at,
    ))
}

/// The values of the attributes `keys` (local names), unescaped, in one pass over the
/// element's attributes; an unknown entity in one of them is an error naming it.
pub(super) fn attributes<const N: usize>(
    e: &BytesStart<'_>,
    keys: [&[u8]; N],
    at: u64,
) -> Result<[Option<String>; N], ReadError> {
    let mut values: [Option<String>; N] = std::array::from_fn(|_| None);
    for attr in e.attributes().with_checks(false) {
        let attr =
            attr.map_err(|err| ReadError::at_offset(format!("malformed attribute: {err}"), at))?;
        let key = attr.key.local_name();
        if let Some(i) = keys.iter().position(|k| *k == key.as_ref())
            && values[i].is_none()
        {
            values[i] = Some(value_of(&attr, keys[i], at)?.into_owned());
        }
    }
    Ok(values)
}

/// An attribute's value as XML reads it (entities resolved, line breaks as spaces).
fn value_of<'a>(attr: &Attribute<'a>, key: &[u8], at: u64) -> Result<Cow<'a, str>, ReadError> {
    attr.normalized_value(quick_xml::XmlVersion::Implicit1_0)
        .map_err(|err| {
            ReadError::at_offset(
                format!("attribute `{}`: {err}", String::from_utf8_lossy(key)),
                at,
            )
        })
}

/// A count a report states (`total="12"`): a whole number, else none.
pub(super) fn count(text: Option<&str>) -> Option<u64> {
    let text = text?.trim();
    text.parse::<u64>().ok().or_else(|| {
        // A count too large to hold is the largest: it claims more than any file lists.
        (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())).then_some(u64::MAX)
    })
}

/// Seconds as .NET runners write them, in milliseconds: `0.014`, or `0,014` where
/// xUnit.net 2.0 wrote the machine's own decimal comma.
pub(super) fn seconds(text: &str) -> Option<u64> {
    let text = text.trim();
    if text.contains(',') && !text.contains('.') && text.matches(',').count() == 1 {
        return seconds_to_ms(&text.replace(',', "."));
    }
    seconds_to_ms(text)
}

/// `text` cut to at most [`MAX_KEPT_NAME_BYTES`] bytes, on a character boundary.
pub(super) fn kept(mut text: String) -> String {
    if text.len() > MAX_KEPT_NAME_BYTES {
        let mut end = MAX_KEPT_NAME_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

/// A name without its suite's: `Ns.Class.Method(1)` in the suite `Ns.Class` is
/// `Method(1)` (xUnit.net, and NUnit 2, write the class before the method; the suite
/// says it already). Any other name is kept whole.
pub(super) fn without_suite<'a>(name: &'a str, suite: &str) -> &'a str {
    match name
        .strip_prefix(suite)
        .and_then(|rest| rest.strip_prefix('.'))
    {
        Some(rest) if !suite.is_empty() && !rest.is_empty() => rest,
        _ => name,
    }
}
