//! A sweep [`Table`] as a Parquet file and back, with the `parquet` crate's own column writer
//! and record reader (no Arrow). The sweep's fingerprint, its size and the shard ride along as
//! key-value metadata, so a merge can check that its inputs belong together.
//!
//! Types: integers INT64, the seed INT64 marked unsigned, numbers DOUBLE, text BYTE_ARRAY marked
//! UTF-8, flags BOOLEAN; a nullable column is OPTIONAL. Snappy compression; row groups of
//! [`ROW_GROUP_ROWS`], so the same table always gives the same bytes.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::record::Field;
use parquet::schema::types::Type;

use super::table::{Column, Data, Provenance, Table};

/// Rows per row group: large enough that a 10,000-point sweep is a few groups, small enough that
/// a reader can skip most of a big file.
pub const ROW_GROUP_ROWS: usize = 65_536;

const KEY_FILE: &str = "tco-sim.sweep.file";
const KEY_FINGERPRINT: &str = "tco-sim.sweep.fingerprint";
const KEY_POINTS: &str = "tco-sim.sweep.points";
const KEY_SHARD: &str = "tco-sim.sweep.shard";

fn field_type(c: &Column) -> Result<Type> {
    let (physical, logical) = match c.data {
        Data::I64(_) => (Physical::INT64, None),
        Data::U64(_) => (Physical::INT64, Some(LogicalType::integer(64, false))),
        Data::F64(_) => (Physical::DOUBLE, None),
        Data::Str(_) => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
        Data::Bool(_) => (Physical::BOOLEAN, None),
    };
    let repetition = if c.nullable {
        Repetition::OPTIONAL
    } else {
        Repetition::REQUIRED
    };
    Ok(Type::primitive_type_builder(&c.name, physical)
        .with_repetition(repetition)
        .with_logical_type(logical)
        .build()?)
}

/// The present values of a slice of a column and, for a nullable column, their definition levels.
fn split<T: Clone>(
    v: &[Option<T>],
    nullable: bool,
    name: &str,
) -> Result<(Vec<T>, Option<Vec<i16>>)> {
    let values: Vec<T> = v.iter().flatten().cloned().collect();
    if nullable {
        Ok((
            values,
            Some(v.iter().map(|x| i16::from(x.is_some())).collect()),
        ))
    } else if values.len() == v.len() {
        Ok((values, None))
    } else {
        bail!("column `{name}` is required but holds a null")
    }
}

/// Write `table` to `path` (through a temporary file beside it, renamed into place, so a reader
/// never sees half a file).
pub fn write(table: &Table, path: &Path) -> Result<()> {
    let fields = table
        .columns
        .iter()
        .map(|c| field_type(c).map(Arc::new))
        .collect::<Result<Vec<_>>>()?;
    let schema = Arc::new(
        Type::group_type_builder("sweep")
            .with_fields(fields)
            .build()?,
    );
    let p = &table.provenance;
    let kv = |k: &str, v: String| KeyValue::new(k.to_string(), v);
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_key_value_metadata(Some(vec![
            kv(KEY_FILE, p.sweep_file.clone()),
            kv(KEY_FINGERPRINT, p.fingerprint.clone()),
            kv(KEY_POINTS, p.points.to_string()),
            kv(KEY_SHARD, p.shard.clone()),
        ]))
        .build();
    // Built in memory and written by the one atomic writer, so a reader (or `sweep merge`)
    // never sees half a shard.
    let mut w = SerializedFileWriter::new(Vec::new(), schema, Arc::new(props))?;
    let rows = table.rows();
    // An empty shard (more shards than points) still writes one empty group, so the file is a
    // valid table with the sweep's columns.
    let groups: Vec<(usize, usize)> = if rows == 0 {
        vec![(0, 0)]
    } else {
        (0..rows)
            .step_by(ROW_GROUP_ROWS)
            .map(|s| (s, (s + ROW_GROUP_ROWS).min(rows)))
            .collect()
    };
    for (start, end) in groups {
        let mut group = w.next_row_group()?;
        for c in &table.columns {
            let mut col = group
                .next_column()?
                .ok_or_else(|| anyhow!("the schema has fewer columns than the table"))?;
            let n = c.nullable;
            match &c.data {
                Data::I64(v) => {
                    let (vals, def) = split(&v[start..end], n, &c.name)?;
                    col.typed::<Int64Type>()
                        .write_batch(&vals, def.as_deref(), None)?;
                }
                Data::U64(v) => {
                    // Parquet keeps unsigned 64-bit integers in INT64, bit for bit.
                    let (vals, def) = split(&v[start..end], n, &c.name)?;
                    let vals: Vec<i64> = vals.into_iter().map(|x| x as i64).collect();
                    col.typed::<Int64Type>()
                        .write_batch(&vals, def.as_deref(), None)?;
                }
                Data::F64(v) => {
                    let (vals, def) = split(&v[start..end], n, &c.name)?;
                    col.typed::<DoubleType>()
                        .write_batch(&vals, def.as_deref(), None)?;
                }
                Data::Str(v) => {
                    let (vals, def) = split(&v[start..end], n, &c.name)?;
                    let vals: Vec<ByteArray> =
                        vals.iter().map(|s| ByteArray::from(s.as_str())).collect();
                    col.typed::<ByteArrayType>()
                        .write_batch(&vals, def.as_deref(), None)?;
                }
                Data::Bool(v) => {
                    let (vals, def) = split(&v[start..end], n, &c.name)?;
                    col.typed::<BoolType>()
                        .write_batch(&vals, def.as_deref(), None)?;
                }
            }
            col.close()?;
        }
        group.close()?;
    }
    let bytes = w.into_inner()?;
    crate::output::write_atomic(path, &bytes).with_context(|| format!("writing {}", path.display()))
}

/// Read a table written by [`write()`].
pub fn read(path: &Path) -> Result<Table> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let reader = SerializedFileReader::new(file)
        .with_context(|| format!("{} is not a Parquet file", path.display()))?;
    let meta = reader.metadata().file_metadata();
    let kv = |k: &str| -> Result<String> {
        meta.key_value_metadata()
            .and_then(|m| m.iter().find(|x| x.key == k))
            .and_then(|x| x.value.clone())
            .ok_or_else(|| {
                anyhow!(
                    "{} has no `{k}`: it was not written by `tco-sim sweep`",
                    path.display()
                )
            })
    };
    let provenance = Provenance {
        sweep_file: kv(KEY_FILE)?,
        fingerprint: kv(KEY_FINGERPRINT)?,
        points: kv(KEY_POINTS)?
            .parse()
            .context("reading the sweep's point count")?,
        shard: kv(KEY_SHARD)?,
    };
    let mut columns: Vec<Column> = meta
        .schema_descr()
        .columns()
        .iter()
        .map(|c| {
            let data = match (c.physical_type(), c.logical_type_ref()) {
                (Physical::INT64, Some(LogicalType::Integer(t))) if !t.is_signed => {
                    Data::U64(vec![])
                }
                (Physical::INT64, _) => Data::I64(vec![]),
                (Physical::DOUBLE, _) => Data::F64(vec![]),
                (Physical::BYTE_ARRAY, _) => Data::Str(vec![]),
                (Physical::BOOLEAN, _) => Data::Bool(vec![]),
                (other, _) => bail!(
                    "column `{}` has type {other}, which a sweep never writes",
                    c.name()
                ),
            };
            Ok(Column {
                name: c.name().to_string(),
                nullable: c.self_type().is_optional(),
                data,
            })
        })
        .collect::<Result<_>>()?;
    for row in reader.get_row_iter(None)? {
        let row = row?;
        for (c, (_, field)) in columns.iter_mut().zip(row.get_column_iter()) {
            let bad = || anyhow!("column `{}` holds {field:?}", c.name);
            match (&mut c.data, field) {
                (Data::I64(v), Field::Long(x)) => v.push(Some(*x)),
                (Data::U64(v), Field::ULong(x)) => v.push(Some(*x)),
                (Data::F64(v), Field::Double(x)) => v.push(Some(*x)),
                (Data::Str(v), Field::Str(x)) => v.push(Some(x.clone())),
                (Data::Bool(v), Field::Bool(x)) => v.push(Some(*x)),
                (Data::I64(v), Field::Null) => v.push(None),
                (Data::U64(v), Field::Null) => v.push(None),
                (Data::F64(v), Field::Null) => v.push(None),
                (Data::Str(v), Field::Null) => v.push(None),
                (Data::Bool(v), Field::Null) => v.push(None),
                _ => return Err(bad()),
            }
        }
    }
    Ok(Table {
        provenance,
        columns,
    })
}
