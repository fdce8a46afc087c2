//! Every record of a result file read from an object, and from nothing else.
//!
//! serde's derived readers take a struct from a JSON object or from a bare list of its
//! values in field order (`"test_counts": [3, 0, 0, "cargo", 0, 0]`): a second layout of
//! every record, which the formats do not describe and which nothing here writes.
//! [`Objects`] wraps a reader so that a struct, at any depth, is read only from an
//! object: a list where one is expected is refused, with the place it is at. Lists of
//! records, maps and every other value are read as before.

use std::fmt;

use serde::Deserialize;
use serde::de::{
    DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess,
    VariantAccess, Visitor,
};
use serde_json::de::Read;

/// `T` read from `bytes` (one JSON document), every struct in it from an object.
pub fn from_slice<'de, T: Deserialize<'de>>(bytes: &'de [u8]) -> serde_json::Result<T> {
    whole(serde_json::Deserializer::from_slice(bytes))
}

/// [`from_slice`], naming the JSON path of what is wrong when it fails (`.` for the
/// document itself, as when something follows it).
pub fn from_slice_at<'de, T: Deserialize<'de>>(bytes: &'de [u8]) -> Result<T, Refused> {
    whole_at(serde_json::Deserializer::from_slice(bytes))
}

/// [`from_slice`] for a document read from `reader`.
pub fn from_reader<T: DeserializeOwned>(reader: impl std::io::Read) -> serde_json::Result<T> {
    whole(serde_json::Deserializer::from_reader(reader))
}

/// [`from_slice_at`] for a document read from `reader`.
pub fn from_reader_at<T: DeserializeOwned>(reader: impl std::io::Read) -> Result<T, Refused> {
    whole_at(serde_json::Deserializer::from_reader(reader))
}

/// The one document `reader` holds, nothing after it.
fn whole<'de, R: Read<'de>, T: Deserialize<'de>>(
    mut reader: serde_json::Deserializer<R>,
) -> serde_json::Result<T> {
    let value = T::deserialize(Objects(&mut reader))?;
    reader.end()?;
    Ok(value)
}

/// [`whole`], with the place of what is wrong.
fn whole_at<'de, R: Read<'de>, T: Deserialize<'de>>(
    mut reader: serde_json::Deserializer<R>,
) -> Result<T, Refused> {
    let value = serde_path_to_error::deserialize(Objects(&mut reader)).map_err(|e| Refused {
        path: e.path().to_string(),
        error: e.into_inner(),
    })?;
    reader.end().map_err(|error| Refused {
        path: ".".to_owned(),
        error,
    })?;
    Ok(value)
}

/// Why a document was not read, and where in it.
#[derive(Debug)]
pub struct Refused {
    /// The JSON path, as `serde_path_to_error` writes it.
    pub path: String,
    pub error: serde_json::Error,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at `{}`: {}", self.path, self.error)
    }
}

/// A reader whose structs, at every depth, are read from objects only.
pub struct Objects<D>(pub D);

/// What a value is read by, wrapped so that what it reads inside is read the same way.
struct Wrap<X>(X);

macro_rules! forward {
    ($($method:ident),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
                self.0.$method(Wrap(visitor))
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Objects<D> {
    type Error = D::Error;

    forward!(
        deserialize_any,
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_option,
        deserialize_unit,
        deserialize_seq,
        deserialize_map,
        deserialize_identifier,
        deserialize_ignored_any,
    );

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_unit_struct(name, Wrap(visitor))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_newtype_struct(name, Wrap(visitor))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, Wrap(visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple_struct(name, len, Wrap(visitor))
    }

    /// The one change: a struct is read as a map, so a list is refused.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(Wrap(visitor))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, Wrap(visitor))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// A visitor's method for a value it is handed as it is: passed on as it came.
macro_rules! visit {
    ($($method:ident: $type:ty),* $(,)?) => {
        $(
            fn $method<E: serde::de::Error>(self, v: $type) -> Result<V::Value, E> {
                self.0.$method(v)
            }
        )*
    };
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    visit!(
        visit_bool: bool,
        visit_i8: i8,
        visit_i16: i16,
        visit_i32: i32,
        visit_i64: i64,
        visit_i128: i128,
        visit_u8: u8,
        visit_u16: u16,
        visit_u32: u32,
        visit_u64: u64,
        visit_u128: u128,
        visit_f32: f32,
        visit_f64: f64,
        visit_char: char,
        visit_str: &str,
        visit_borrowed_str: &'de str,
        visit_string: String,
        visit_bytes: &[u8],
        visit_borrowed_bytes: &'de [u8],
        visit_byte_buf: Vec<u8>,
    );

    fn visit_none<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_none()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_some(Objects(d))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_unit()
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_newtype_struct(Objects(d))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.0.visit_seq(Wrap(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(Wrap(map))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.0.visit_enum(Wrap(data))
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Wrap<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Objects(d))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Wrap<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Wrap(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Wrap<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(Wrap(seed))
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(Wrap(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Wrap<A> {
    type Error = A::Error;
    type Variant = Wrap<A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Self::Variant), A::Error> {
        let (value, variant) = self.0.variant_seed(Wrap(seed))?;
        Ok((value, Wrap(variant)))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Wrap<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.newtype_variant_seed(Wrap(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, Wrap(visitor))
    }

    /// A struct variant's fields are an object too.
    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.0.newtype_variant_seed(StructFields(visitor))
    }
}

/// A struct variant's value, read as a map.
struct StructFields<V>(V);

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for StructFields<V> {
    type Value = V::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        d.deserialize_map(Wrap(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Inner {
        a: u32,
        b: String,
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    enum Kind {
        Plain,
        Fields { x: u32 },
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Outer {
        inner: Option<Box<Inner>>,
        list: Vec<Inner>,
        pair: (u32, u32),
        kinds: Vec<Kind>,
    }

    #[test]
    fn objects_are_read_as_before() {
        let text = br#"{"inner": {"a": 1, "b": "x"}, "list": [{"b": "y", "a": 2}],
            "pair": [3, 4], "kinds": ["Plain", {"Fields": {"x": 5}}]}"#;
        let outer: Outer = from_slice(text).unwrap();
        assert_eq!(outer, serde_json::from_slice(text).unwrap());
        assert_eq!(outer.list[0].a, 2);
    }

    #[test]
    fn a_list_for_a_struct_is_refused_at_every_depth() {
        for (text, at) in [
            (r#"[null, [], [0, 0], []]"#, "."),
            (
                r#"{"inner": [1, "x"], "list": [], "pair": [0, 0], "kinds": []}"#,
                "inner",
            ),
            (
                r#"{"inner": null, "list": [[2, "y"]], "pair": [0, 0], "kinds": []}"#,
                "list[0]",
            ),
            (
                r#"{"inner": null, "list": [], "pair": [0, 0], "kinds": [{"Fields": [5]}]}"#,
                "kinds[0].Fields",
            ),
        ] {
            // serde's own reader takes each of these.
            assert!(serde_json::from_str::<Outer>(text).is_ok(), "{text}");
            let e = from_slice_at::<Outer>(text.as_bytes()).unwrap_err();
            assert_eq!(e.path, at, "{text}");
            assert!(e.error.to_string().contains("invalid type"), "{e}");
            assert!(from_slice::<Outer>(text.as_bytes()).is_err(), "{text}");
        }
    }

    #[test]
    fn what_follows_the_document_is_refused() {
        assert!(from_slice::<Inner>(br#"{"a": 1, "b": "x"} {}"#).is_err());
        let e = from_slice_at::<Inner>(br#"{"a": 1, "b": "x"} x"#).unwrap_err();
        assert_eq!(e.path, ".");
    }
}
