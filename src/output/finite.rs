//! A guard for the outputs: finds the first non-finite number (inf or NaN) in any serializable
//! value and names where it is (`tiers[2].options[0].npv_usd`).
//!
//! serde_json writes inf and NaN as `null`, which a reader cannot tell from an absent value, so
//! a non-finite number that reached `results.json` would be silent. The writers call [`check`]
//! before writing and fail instead (issue 15: no inf or NaN in any output). The check is a serde
//! `Serializer` that keeps a path and discards everything else, so it follows exactly the
//! structure the JSON and CSV are written from.

use std::fmt;

use serde::Serialize;
use serde::ser::{self, Impossible};

/// The first non-finite number in `value`, as `Err("path = inf")`.
pub fn check<T: Serialize + ?Sized>(value: &T) -> Result<(), String> {
    let mut w = Walker { path: Vec::new() };
    match value.serialize(&mut w) {
        Ok(()) => Ok(()),
        Err(Found(msg)) => Err(msg),
    }
}

/// Where the walk is: field names and sequence indices.
struct Walker {
    path: Vec<String>,
}

impl Walker {
    fn here(&self) -> String {
        let mut s = String::new();
        for p in &self.path {
            if p.starts_with('[') || s.is_empty() {
                s.push_str(p);
            } else {
                s.push('.');
                s.push_str(p);
            }
        }
        if s.is_empty() {
            "(top level)".into()
        } else {
            s
        }
    }

    fn float(&self, x: f64) -> Result<(), Found> {
        if x.is_finite() {
            Ok(())
        } else {
            Err(Found(format!("{} = {x}", self.here())))
        }
    }

    fn nested<T: Serialize + ?Sized>(&mut self, segment: String, v: &T) -> Result<(), Found> {
        self.path.push(segment);
        let r = v.serialize(&mut *self);
        self.path.pop();
        r
    }
}

/// The walk stops at the first non-finite number; this carries where it was.
#[derive(Debug)]
struct Found(String);

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Found {}

impl ser::Error for Found {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Found(msg.to_string())
    }
}

/// A sequence, tuple or map being walked: counts its elements for the path.
struct Compound<'a> {
    w: &'a mut Walker,
    index: usize,
    key: Option<String>,
}

impl Compound<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Found> {
        let i = self.index;
        self.index += 1;
        self.w.nested(format!("[{i}]"), v)
    }
}

macro_rules! finite_ok {
    ($($name:ident: $t:ty),*) => {
        $(fn $name(self, _: $t) -> Result<(), Found> { Ok(()) })*
    };
}

impl<'a> ser::Serializer for &'a mut Walker {
    type Ok = ();
    type Error = Found;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    finite_ok!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_char: char, serialize_str: &str, serialize_bytes: &[u8]);

    fn serialize_f32(self, v: f32) -> Result<(), Found> {
        self.float(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<(), Found> {
        self.float(v)
    }
    fn serialize_none(self) -> Result<(), Found> {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Found> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Found> {
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Found> {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Found> {
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Found> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), Found> {
        self.nested(variant.into(), v)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'a>, Found> {
        Ok(Compound {
            w: self,
            index: 0,
            key: None,
        })
    }
    fn serialize_tuple(self, _: usize) -> Result<Compound<'a>, Found> {
        self.serialize_seq(None)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, Found> {
        self.serialize_seq(None)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Found> {
        self.serialize_seq(None)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'a>, Found> {
        self.serialize_seq(None)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, Found> {
        self.serialize_seq(None)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Found> {
        self.serialize_seq(None)
    }
}

impl ser::SerializeSeq for Compound<'_> {
    type Ok = ();
    type Error = Found;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Found> {
        self.element(v)
    }
    fn end(self) -> Result<(), Found> {
        Ok(())
    }
}

impl ser::SerializeTuple for Compound<'_> {
    type Ok = ();
    type Error = Found;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Found> {
        self.element(v)
    }
    fn end(self) -> Result<(), Found> {
        Ok(())
    }
}

impl ser::SerializeTupleStruct for Compound<'_> {
    type Ok = ();
    type Error = Found;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Found> {
        self.element(v)
    }
    fn end(self) -> Result<(), Found> {
        Ok(())
    }
}

impl ser::SerializeTupleVariant for Compound<'_> {
    type Ok = ();
    type Error = Found;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Found> {
        self.element(v)
    }
    fn end(self) -> Result<(), Found> {
        Ok(())
    }
}

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Found;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), Found> {
        // Keys are names; a map keyed by numbers would still be walked by position.
        self.key = Some(KeyName::of(k));
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Found> {
        match self.key.take() {
            Some(k) => self.w.nested(k, v),
            None => self.element(v),
        }
    }
    fn end(self) -> Result<(), Found> {
        Ok(())
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = Found;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        v: &T,
    ) -> Result<(), Found> {
        self.w.nested(name.into(), v)
    }
    fn end(self) -> Result<(), Found> {
        Ok(())
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = Found;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        v: &T,
    ) -> Result<(), Found> {
        self.w.nested(name.into(), v)
    }
    fn end(self) -> Result<(), Found> {
        Ok(())
    }
}

/// A map key as text for the path (strings as written; anything else as `?`).
struct KeyName(String);

impl KeyName {
    fn of<T: Serialize + ?Sized>(k: &T) -> String {
        let mut n = KeyName(String::from("?"));
        // A key that is not a string leaves the placeholder; the walk only needs a label.
        let _ = k.serialize(&mut n);
        n.0
    }
}

impl ser::Serializer for &mut KeyName {
    type Ok = ();
    type Error = Found;
    type SerializeSeq = Impossible<(), Found>;
    type SerializeTuple = Impossible<(), Found>;
    type SerializeTupleStruct = Impossible<(), Found>;
    type SerializeTupleVariant = Impossible<(), Found>;
    type SerializeMap = Impossible<(), Found>;
    type SerializeStruct = Impossible<(), Found>;
    type SerializeStructVariant = Impossible<(), Found>;

    fn serialize_str(self, v: &str) -> Result<(), Found> {
        self.0 = v.to_string();
        Ok(())
    }
    finite_ok!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_char: char, serialize_bytes: &[u8], serialize_f32: f32,
        serialize_f64: f64);
    fn serialize_none(self) -> Result<(), Found> {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Found> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Found> {
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Found> {
        Ok(())
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Found> {
        self.0 = variant.to_string();
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Found> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Found> {
        Ok(())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Found> {
        Err(Found("a sequence as a map key".into()))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Found> {
        Err(Found("a tuple as a map key".into()))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Found> {
        Err(Found("a tuple as a map key".into()))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Found> {
        Err(Found("a tuple as a map key".into()))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Found> {
        Err(Found("a map as a map key".into()))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Found> {
        Err(Found("a struct as a map key".into()))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Found> {
        Err(Found("a struct as a map key".into()))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[derive(Serialize)]
    struct Year {
        year: u32,
        usd: f64,
    }

    #[derive(Serialize)]
    struct Run {
        name: String,
        years: Vec<Year>,
        best: Option<f64>,
        by_tier: BTreeMap<String, (f64, f64)>,
    }

    fn run(x: f64) -> Run {
        Run {
            name: "a".into(),
            years: vec![Year { year: 1, usd: 2.0 }, Year { year: 2, usd: x }],
            best: None,
            by_tier: BTreeMap::from([("l4".to_string(), (1.0, 2.0))]),
        }
    }

    #[test]
    fn finite_values_pass() {
        assert_eq!(check(&run(3.0)), Ok(()));
    }

    #[test]
    fn names_the_path_of_the_first_non_finite_number() {
        assert_eq!(check(&run(f64::INFINITY)), Err("years[1].usd = inf".into()));
        assert_eq!(check(&run(f64::NAN)), Err("years[1].usd = NaN".into()));
        let mut r = run(1.0);
        r.by_tier.insert("h100".into(), (f64::NEG_INFINITY, 0.0));
        assert_eq!(check(&r), Err("by_tier.h100[0] = -inf".into()));
        r.best = Some(f64::NAN);
        assert_eq!(check(&r), Err("best = NaN".into()));
    }
}
