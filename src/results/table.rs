//! A partial result's `checks` as a table (format 3, docs/formats.md §2): the names of a
//! check's fields once, as `columns`, then one row of values per check, in that order.
//!
//! A check's row is read as the check's own object would be, by the same derived reader:
//! the row is handed to it as the map of each column's name to the row's value there.
//! So the table is held to every rule an object is, and to its own besides: every
//! field of a check named once (no unknown name, none twice, none left out), and each
//! row exactly as long as `columns`.

use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::ser::{self, SerializeMap};
use serde::{Deserialize, Deserializer, Serializer};

use super::schema::{CheckResult, CountedChecks};

/// The keys of a table of checks, in the order they are written.
const COLUMNS: &str = "columns";
const ROWS: &str = "rows";

/// The fields of a check's object (§4), as its derived reader names them, in the order
/// it writes them.
pub fn check_fields() -> &'static [&'static str] {
    static FIELDS: OnceLock<&'static [&'static str]> = OnceLock::new();
    FIELDS.get_or_init(|| match CheckResult::deserialize(FieldNames) {
        Err(Named(fields)) => fields,
        Ok(_) => unreachable!("the field names' reader reads no check"),
    })
}

/// A reader that reads no value: asked for a struct, it answers with the struct's field
/// names (as its error, the one way out of `deserialize`).
struct FieldNames;

#[derive(Debug)]
struct Named(&'static [&'static str]);

impl fmt::Display for Named {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a struct")
    }
}

impl std::error::Error for Named {}

impl de::Error for Named {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Named(&[])
    }
}

impl<'de> Deserializer<'de> for FieldNames {
    type Error = Named;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Named> {
        Err(Named(&[]))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Named> {
        Err(Named(fields))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
        identifier ignored_any
    }
}

/// How a partial result's `checks` is written and read: the checks themselves, or only
/// how many there are ([`CountedChecks`], which is read, never written).
pub trait ChecksLayout: Sized {
    /// Writes the checks as a table.
    fn write<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error>;
    /// Reads the checks as a list of objects (formats 1 and 2) or as a table (format 3).
    fn read<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error>;
}

impl ChecksLayout for Vec<Box<CheckResult>> {
    fn write<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut rows = Vec::with_capacity(self.len());
        for check in self {
            rows.push(row_of(check).map_err(ser::Error::custom)?);
        }
        let mut table = serializer.serialize_map(Some(2))?;
        table.serialize_entry(COLUMNS, check_fields())?;
        table.serialize_entry(ROWS, &rows)?;
        table.end()
    }

    fn read<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Checks::<Keep>(PhantomData))
    }
}

impl ChecksLayout for CountedChecks {
    fn write<S: Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        Err(ser::Error::custom("checks only counted are not written"))
    }

    fn read<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Checks::<Count>(PhantomData))
    }
}

/// One check's row: its fields' values in [`check_fields`]' order, `null` for a field
/// its object leaves out (each one an `Option`, or a list read as empty from `null`).
fn row_of(check: &CheckResult) -> Result<Vec<serde_json::Value>, String> {
    let serde_json::Value::Object(mut object) =
        serde_json::to_value(check).map_err(|e| e.to_string())?
    else {
        return Err("a check is not written as an object".to_owned());
    };
    let row = check_fields()
        .iter()
        .map(|field| object.remove(*field).unwrap_or(serde_json::Value::Null))
        .collect();
    match object.keys().next() {
        None => Ok(row),
        Some(key) => Err(format!("a check's field `{key}` has no column")),
    }
}

/// What is made of each check read: the check, or only a count of them (its values
/// still read as JSON, and a row still held to its columns' number).
trait Take<'de> {
    type Checks;
    /// One check, as read.
    type Check;
    fn empty(hint: Option<usize>) -> Self::Checks;
    fn add(checks: &mut Self::Checks, check: Self::Check);
    /// A check of a list, read as its object only: a list of its values in the fields'
    /// order, which a derived reader would also take, is a third layout, with none of a
    /// table's rules, and is refused.
    fn object<D: Deserializer<'de>>(deserializer: D) -> Result<Self::Check, D::Error>;
    /// A check's row, read as the check whose object maps each column to the row's
    /// value there.
    fn row<A: SeqAccess<'de>>(cells: &mut Cells<'_, A>) -> Result<Self::Check, A::Error>;
}

/// Every check kept.
struct Keep;

impl<'de> Take<'de> for Keep {
    type Checks = Vec<Box<CheckResult>>;
    type Check = CheckResult;

    fn empty(hint: Option<usize>) -> Self::Checks {
        // A hint is what the file claims: it sizes nothing beyond a bound.
        Vec::with_capacity(hint.unwrap_or(0).min(4096))
    }

    fn add(checks: &mut Self::Checks, check: CheckResult) {
        checks.push(Box::new(check));
    }

    fn object<D: Deserializer<'de>>(deserializer: D) -> Result<CheckResult, D::Error> {
        CheckResult::deserialize(AsMap(deserializer))
    }

    fn row<A: SeqAccess<'de>>(cells: &mut Cells<'_, A>) -> Result<CheckResult, A::Error> {
        CheckResult::deserialize(de::value::MapAccessDeserializer::new(cells))
    }
}

/// Only how many checks there are.
struct Count;

impl<'de> Take<'de> for Count {
    type Checks = CountedChecks;
    type Check = ();

    fn empty(_: Option<usize>) -> CountedChecks {
        CountedChecks(0)
    }

    fn add(checks: &mut CountedChecks, (): ()) {
        checks.0 += 1;
    }

    fn object<D: Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(IgnoredAny).map(|_| ())
    }

    fn row<A: SeqAccess<'de>>(cells: &mut Cells<'_, A>) -> Result<(), A::Error> {
        while cells.next_key::<IgnoredAny>()?.is_some() {
            cells.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

/// A reader asked for anything reads a map (an object) or refuses.
struct AsMap<D>(D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for AsMap<D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map struct
        enum identifier ignored_any
    }
}

/// The reader of a result's `checks`, in either layout.
struct Checks<T>(PhantomData<T>);

impl<'de, T: Take<'de>> Visitor<'de> for Checks<T> {
    type Value = T::Checks;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of checks, or a table of them (`columns` and `rows`)")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut list: A) -> Result<T::Checks, A::Error> {
        let mut checks = T::empty(list.size_hint());
        while let Some(check) = list.next_element_seed(Object::<T>(PhantomData))? {
            T::add(&mut checks, check);
        }
        Ok(checks)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut table: A) -> Result<T::Checks, A::Error> {
        // `columns` first, then `rows`, nothing else: the rows cannot be read before
        // their columns are known, and nothing else belongs in the table.
        match table.next_key::<TableKey>()? {
            Some(TableKey::Columns) => {}
            Some(TableKey::Rows) => {
                return Err(de::Error::custom(
                    "the table of checks has `rows` before its `columns`",
                ));
            }
            None => return Err(de::Error::missing_field(COLUMNS)),
        }
        let columns: Columns = table.next_value()?;
        match table.next_key::<TableKey>()? {
            Some(TableKey::Rows) => {}
            Some(TableKey::Columns) => return Err(de::Error::duplicate_field(COLUMNS)),
            None => return Err(de::Error::missing_field(ROWS)),
        }
        let checks = table.next_value_seed(Rows::<T> {
            take: PhantomData,
            columns: &columns,
        })?;
        match table.next_key::<TableKey>()? {
            None => Ok(checks),
            Some(TableKey::Columns) => Err(de::Error::duplicate_field(COLUMNS)),
            Some(TableKey::Rows) => Err(de::Error::duplicate_field(ROWS)),
        }
    }
}

/// A key of the table: `columns` or `rows`, any other an error.
enum TableKey {
    Columns,
    Rows,
}

impl<'de> Deserialize<'de> for TableKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Key;
        impl Visitor<'_> for Key {
            type Value = TableKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`columns` or `rows`")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<TableKey, E> {
                match key {
                    COLUMNS => Ok(TableKey::Columns),
                    ROWS => Ok(TableKey::Rows),
                    other => Err(de::Error::unknown_field(other, &[COLUMNS, ROWS])),
                }
            }
        }
        deserializer.deserialize_identifier(Key)
    }
}

/// A table's `columns`: every field of a check, each once, in any order.
struct Columns(Vec<&'static str>);

impl<'de> Deserialize<'de> for Columns {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Names;
        impl<'de> Visitor<'de> for Names {
            type Value = Columns;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("the list of a check's field names")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut names: A) -> Result<Columns, A::Error> {
                let fields = check_fields();
                let mut columns = Vec::with_capacity(fields.len());
                while let Some(name) = names.next_element::<std::borrow::Cow<'de, str>>()? {
                    let Some(field) = fields.iter().find(|f| **f == name) else {
                        return Err(de::Error::custom(format_args!(
                            "the column `{}` is no field of a check",
                            name.escape_debug()
                        )));
                    };
                    if columns.contains(field) {
                        return Err(de::Error::custom(format_args!(
                            "the column `{field}` is named twice"
                        )));
                    }
                    columns.push(*field);
                }
                if let Some(left_out) = fields.iter().find(|f| !columns.contains(f)) {
                    return Err(de::Error::custom(format_args!(
                        "the columns leave out the field `{left_out}`"
                    )));
                }
                Ok(Columns(columns))
            }
        }
        deserializer.deserialize_seq(Names)
    }
}

/// A table's `rows`, each read by the columns into what `T` makes of it.
struct Rows<'c, T> {
    take: PhantomData<T>,
    columns: &'c Columns,
}

impl<'de, T: Take<'de>> DeserializeSeed<'de> for Rows<'_, T> {
    type Value = T::Checks;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T::Checks, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, T: Take<'de>> Visitor<'de> for Rows<'_, T> {
    type Value = T::Checks;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of rows, one per check")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut rows: A) -> Result<T::Checks, A::Error> {
        let mut checks = T::empty(rows.size_hint());
        let row = || Row::<T> {
            take: PhantomData,
            columns: self.columns,
        };
        while let Some(check) = rows.next_element_seed(row())? {
            T::add(&mut checks, check);
        }
        Ok(checks)
    }
}

/// A check of a list, read by `T` as its object.
struct Object<T>(PhantomData<T>);

impl<'de, T: Take<'de>> DeserializeSeed<'de> for Object<T> {
    type Value = T::Check;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T::Check, D::Error> {
        T::object(deserializer)
    }
}

/// One row, read by `T` through its columns.
struct Row<'c, T> {
    take: PhantomData<T>,
    columns: &'c Columns,
}

impl<'de, T: Take<'de>> DeserializeSeed<'de> for Row<'_, T> {
    type Value = T::Check;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T::Check, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, T: Take<'de>> Visitor<'de> for Row<'_, T> {
    type Value = T::Check;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a check's row: a list of its fields' values")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, values: A) -> Result<T::Check, A::Error> {
        let mut cells = Cells {
            columns: &self.columns.0,
            at: 0,
            values,
        };
        let check = T::row(&mut cells)?;
        // A check's reader stops at the last column: the row must end there too.
        cells.end()?;
        Ok(check)
    }
}

/// A row's values as a map: the key of each is its column's name.
struct Cells<'c, A> {
    columns: &'c [&'static str],
    at: usize,
    values: A,
}

impl<'de, A: SeqAccess<'de>> Cells<'_, A> {
    /// That the row has no value past its last column.
    fn end(&mut self) -> Result<(), A::Error> {
        if self.at < self.columns.len() {
            // The check's reader stopped early: only an error does that, and it was given.
            return Err(de::Error::custom("a row was not read to its end"));
        }
        match self.values.next_element::<IgnoredAny>()? {
            None => Ok(()),
            Some(_) => Err(de::Error::custom(format_args!(
                "a row has more values than the {} columns",
                self.columns.len()
            ))),
        }
    }
}

impl<'de, A: SeqAccess<'de>> MapAccess<'de> for Cells<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let Some(column) = self.columns.get(self.at) else {
            return Ok(None);
        };
        seed.deserialize(de::value::BorrowedStrDeserializer::new(column))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        let column = self.columns[self.at];
        self.at += 1;
        match self.values.next_element_seed(seed)? {
            Some(value) => Ok(value),
            None => Err(de::Error::custom(format_args!(
                "a row ends before its column `{column}` (it has {} values, the columns {})",
                self.at - 1,
                self.columns.len()
            ))),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.columns.len() - self.at)
    }
}

/// `checks` written as a table, for [`serde_json`]'s writer.
#[cfg(test)]
fn table_json(checks: &[Box<CheckResult>]) -> serde_json::Value {
    let checks = checks.to_vec();
    checks.write(serde_json::value::Serializer).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::schema::Status;

    fn check(id: &str) -> Box<CheckResult> {
        let mut check: CheckResult = serde_json::from_value(serde_json::json!({
            "command_id": id, "environment": "linux", "kind": "run", "command": "true",
            "cwd": ".", "required": true, "must_be_effective": false, "gate_type": "custom",
            "status": "PASS", "exit_code": 0, "required_exit_code": 0, "duration_ms": 2,
            "log_path": format!("logs/linux/{id}.log"), "gate_effective": true,
            "tests_executed": null, "test_counts": null, "ineffective_reason": null,
            "summary": "passed (exit 0) in 2ms", "retryable": false, "attempts": 1,
            "flaky": false, "timed_out": false, "leaked": [], "refused": null
        }))
        .unwrap();
        check.status = Status::Pass;
        Box::new(check)
    }

    /// `value` read as checks, held as a result holds them.
    #[allow(clippy::vec_box)]
    fn read(value: serde_json::Value) -> Result<Vec<Box<CheckResult>>, String> {
        let text = value.to_string();
        let mut reader = serde_json::Deserializer::from_str(&text);
        <Vec<Box<CheckResult>> as ChecksLayout>::read(&mut reader).map_err(|e| e.to_string())
    }

    fn count(value: serde_json::Value) -> Result<usize, String> {
        let text = value.to_string();
        let mut reader = serde_json::Deserializer::from_str(&text);
        CountedChecks::read(&mut reader)
            .map(|c| c.0)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_table_reads_back_as_the_checks_written() {
        let mut checks = vec![check("a"), check("b")];
        checks[1].items = vec![super::super::schema::ItemResult {
            item: "x".into(),
            kind: "run".into(),
            status: Status::Fail,
            exit_code: Some(1),
            summary: "failed".into(),
            log_path: None,
            items: Vec::new(),
        }];
        checks[1].cause = Some("why".into());
        let table = table_json(&checks);
        assert_eq!(
            table["columns"].as_array().unwrap().len(),
            check_fields().len()
        );
        assert_eq!(table["rows"].as_array().unwrap().len(), 2);
        assert_eq!(read(table.clone()).unwrap(), checks);
        assert_eq!(count(table).unwrap(), 2);
    }

    #[test]
    fn the_columns_are_every_key_a_check_is_written_with() {
        let object = serde_json::to_value(check("a")).unwrap();
        let written: Vec<&str> = object
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        for key in &written {
            assert!(check_fields().contains(key), "{key}");
        }
        // The columns an object leaves out when it has none: each read from `null`.
        let left_out: Vec<&str> = check_fields()
            .iter()
            .copied()
            .filter(|f| !written.contains(f))
            .collect();
        assert_eq!(left_out, ["cause", "items", "tests", "sharded"]);
    }

    #[test]
    fn counting_refuses_what_reading_refuses() {
        let good = table_json(&[check("a"), check("b")]);
        let mut bad = Vec::new();
        let mut long = good.clone();
        long["rows"][0]
            .as_array_mut()
            .unwrap()
            .push(serde_json::Value::Null);
        bad.push(long);
        let mut short = good.clone();
        short["rows"][1].as_array_mut().unwrap().pop();
        bad.push(short);
        let mut twice = good.clone();
        twice["columns"][1] = "command_id".into();
        bad.push(twice);
        let mut unknown = good.clone();
        unknown["columns"][1] = "where".into();
        bad.push(unknown);
        let mut missing = good.clone();
        missing.as_object_mut().unwrap().remove("rows");
        bad.push(missing);
        for table in bad {
            assert!(read(table.clone()).is_err(), "{table}");
            assert!(count(table.clone()).is_err(), "{table}");
        }
        // A check as the list of its values, with no columns, is no layout at all.
        let positional = serde_json::json!([[
            "a",
            "linux",
            "run",
            "true",
            ".",
            true,
            false,
            "custom",
            "PASS",
            0,
            0,
            2,
            null,
            true,
            null,
            null,
            null,
            "passed",
            null,
            false,
            1,
            false,
            false,
            [],
            null
        ]]);
        let said = read(positional.clone()).unwrap_err();
        assert!(said.contains("invalid type: sequence, expected"), "{said}");
        assert!(count(positional).is_err());
        // A list of objects, as format 2 wrote it, is read too.
        let listed = serde_json::json!([check("a"), check("b")]);
        assert_eq!(read(listed.clone()).unwrap().len(), 2);
        assert_eq!(count(listed).unwrap(), 2);
    }
}
