//! The sweep's output table, in columns: one row per point × tier × option, the axis values as
//! columns. Built from a manifest and its points' rows, read back from Parquet for a merge, and
//! printed as CSV; the same table gives the same bytes whichever way it was made.

use std::fmt::Write as _;

use super::pipeline::TierRow;
use super::spec::Manifest;

/// Columns every sweep table has besides its axes (and `units_year_*`); an axis may not take
/// one of these names.
pub const FIXED_COLUMNS: &[&str] = &[
    "point",
    "point_seed",
    "scenario",
    "tier",
    "profile",
    "option",
    "slo_percentile",
    "slo_latency_s",
    "total_usd",
    "npv_usd",
    "net_present_cost_usd",
    "cost_per_million_usd",
    "meets_slo",
    "recommended",
    "infeasible",
];

/// The values of one column; `None` is a null.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    I64(Vec<Option<i64>>),
    U64(Vec<Option<u64>>),
    F64(Vec<Option<f64>>),
    Str(Vec<Option<String>>),
    Bool(Vec<Option<bool>>),
}

impl Data {
    pub fn len(&self) -> usize {
        match self {
            Data::I64(v) => v.len(),
            Data::U64(v) => v.len(),
            Data::F64(v) => v.len(),
            Data::Str(v) => v.len(),
            Data::Bool(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The same kind of column with no values.
    pub fn empty_like(&self) -> Data {
        match self {
            Data::I64(_) => Data::I64(vec![]),
            Data::U64(_) => Data::U64(vec![]),
            Data::F64(_) => Data::F64(vec![]),
            Data::Str(_) => Data::Str(vec![]),
            Data::Bool(_) => Data::Bool(vec![]),
        }
    }

    /// Append row `i` of `other` (a column of the same kind).
    fn push_from(&mut self, other: &Data, i: usize) {
        match (self, other) {
            (Data::I64(a), Data::I64(b)) => a.push(b[i]),
            (Data::U64(a), Data::U64(b)) => a.push(b[i]),
            (Data::F64(a), Data::F64(b)) => a.push(b[i]),
            (Data::Str(a), Data::Str(b)) => a.push(b[i].clone()),
            (Data::Bool(a), Data::Bool(b)) => a.push(b[i]),
            _ => unreachable!("columns are checked to be of one kind before rows are copied"),
        }
    }

    /// The kind, for messages and schema checks.
    pub fn kind(&self) -> &'static str {
        match self {
            Data::I64(_) => "integer",
            Data::U64(_) => "unsigned integer",
            Data::F64(_) => "number",
            Data::Str(_) => "string",
            Data::Bool(_) => "boolean",
        }
    }

    /// Row `i` as CSV text: integers in decimal, numbers in Rust's shortest form that reads back
    /// to the same value, nulls empty.
    fn cell(&self, i: usize) -> String {
        match self {
            Data::I64(v) => v[i].map(|x| x.to_string()).unwrap_or_default(),
            Data::U64(v) => v[i].map(|x| x.to_string()).unwrap_or_default(),
            Data::F64(v) => v[i].map(|x| x.to_string()).unwrap_or_default(),
            Data::Str(v) => v[i].clone().unwrap_or_default(),
            Data::Bool(v) => v[i].map(|x| x.to_string()).unwrap_or_default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    /// Whether the column may hold nulls (a Parquet OPTIONAL field).
    pub nullable: bool,
    pub data: Data,
}

/// What a table says about the sweep it came from (written as Parquet key-value metadata).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// The sweep file as named when it ran.
    pub sweep_file: String,
    /// [`Manifest::fingerprint_hex`].
    pub fingerprint: String,
    /// Points in the whole sweep.
    pub points: u32,
    /// Which slice this table holds, as "I/N"; "0/1" for a whole sweep or a merge.
    pub shard: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub provenance: Provenance,
    pub columns: Vec<Column>,
}

impl Table {
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.data.len())
    }

    /// The `point` column.
    pub fn points(&self) -> Vec<u32> {
        match self.columns.first().map(|c| &c.data) {
            Some(Data::I64(v)) => v.iter().map(|p| p.unwrap_or(-1) as u32).collect(),
            _ => vec![],
        }
    }

    /// A table with these columns and no rows.
    pub fn empty_like(&self, provenance: Provenance) -> Table {
        Table {
            provenance,
            columns: self
                .columns
                .iter()
                .map(|c| Column {
                    name: c.name.clone(),
                    nullable: c.nullable,
                    data: c.data.empty_like(),
                })
                .collect(),
        }
    }

    /// Append row `i` of `other`, whose columns match this table's.
    pub fn push_row(&mut self, other: &Table, i: usize) {
        for (a, b) in self.columns.iter_mut().zip(&other.columns) {
            a.data.push_from(&b.data, i);
        }
    }

    /// The column layout as "name kind[?]", for comparing two tables' schemas.
    pub fn layout(&self) -> Vec<String> {
        self.columns
            .iter()
            .map(|c| {
                format!(
                    "{} {}{}",
                    c.name,
                    c.data.kind(),
                    if c.nullable { "?" } else { "" }
                )
            })
            .collect()
    }

    /// The table as CSV: a header, then one line per row.
    pub fn csv(&self) -> String {
        let mut w = ::csv::Writer::from_writer(Vec::new());
        w.write_record(self.columns.iter().map(|c| c.name.as_str()))
            .expect("CSV header writes to memory");
        for i in 0..self.rows() {
            w.write_record(self.columns.iter().map(|c| c.data.cell(i)))
                .expect("CSV rows write to memory");
        }
        String::from_utf8(w.into_inner().expect("CSV buffer flushes")).expect("CSV is UTF-8")
    }

    /// Build the table of `points` (index, rows), in point order, from their manifest.
    pub fn build(manifest: &Manifest, shard: &str, points: &[(u32, Vec<TierRow>)]) -> Table {
        let mut points: Vec<&(u32, Vec<TierRow>)> = points.iter().collect();
        points.sort_by_key(|(p, _)| *p);
        let rows: Vec<(&super::spec::Point, &TierRow)> = points
            .iter()
            .flat_map(|(p, rows)| {
                let point = &manifest.points[*p as usize];
                rows.iter().map(move |r| (point, r))
            })
            .collect();
        let mut columns = Vec::new();
        let mut col = |name: &str, nullable: bool, data: Data| {
            columns.push(Column {
                name: name.to_string(),
                nullable,
                data,
            })
        };
        col(
            "point",
            false,
            Data::I64(rows.iter().map(|(p, _)| Some(i64::from(p.index))).collect()),
        );
        col(
            "point_seed",
            false,
            Data::U64(rows.iter().map(|(p, _)| Some(p.seed)).collect()),
        );
        col(
            "scenario",
            false,
            Data::Str(
                rows.iter()
                    .map(|(p, _)| Some(manifest.scenarios[p.scenario].label.clone()))
                    .collect(),
            ),
        );
        for (j, axis) in manifest.axes.iter().enumerate() {
            let values = rows.iter().map(|(p, _)| &axis.values[p.choice[j]]);
            col(&axis.name, false, axis_data(&axis.values, values));
        }
        let text =
            |f: fn(&TierRow) -> Option<String>| Data::Str(rows.iter().map(|(_, r)| f(r)).collect());
        col("tier", false, text(|r| Some(r.tier.clone())));
        col("profile", false, text(|r| Some(r.profile.clone())));
        col("option", true, text(|r| r.option.clone()));
        for y in 0..manifest.max_horizon_years as usize {
            col(
                &format!("units_year_{}", y + 1),
                true,
                Data::I64(
                    rows.iter()
                        .map(|(_, r)| r.units.get(y).map(|&u| i64::from(u)))
                        .collect(),
                ),
            );
        }
        let num =
            |f: fn(&TierRow) -> Option<f64>| Data::F64(rows.iter().map(|(_, r)| f(r)).collect());
        col("slo_percentile", false, num(|r| Some(r.slo_percentile)));
        col("slo_latency_s", true, num(|r| r.slo_latency_s));
        col("total_usd", true, num(|r| r.total_usd));
        col("npv_usd", true, num(|r| r.npv_usd));
        col(
            "net_present_cost_usd",
            true,
            num(|r| r.net_present_cost_usd),
        );
        col(
            "cost_per_million_usd",
            true,
            num(|r| r.cost_per_million_usd),
        );
        col(
            "meets_slo",
            false,
            Data::Bool(rows.iter().map(|(_, r)| Some(r.meets_slo)).collect()),
        );
        col(
            "recommended",
            false,
            Data::Bool(rows.iter().map(|(_, r)| Some(r.recommended)).collect()),
        );
        col("infeasible", true, text(|r| r.infeasible.clone()));
        Table {
            provenance: Provenance {
                sweep_file: manifest.file.clone(),
                fingerprint: manifest.fingerprint_hex(),
                points: manifest.points.len() as u32,
                shard: shard.to_string(),
            },
            columns,
        }
    }
}

/// An axis column in the type its values share: whole numbers as integers, numbers as doubles,
/// strings and booleans as such; anything else (arrays, tables, mixed kinds) as its TOML text.
fn axis_data<'a>(all: &[toml::Value], values: impl Iterator<Item = &'a toml::Value>) -> Data {
    use toml::Value as V;
    if all.iter().all(|v| matches!(v, V::Integer(_))) {
        Data::I64(values.map(|v| v.as_integer()).collect())
    } else if all.iter().all(|v| matches!(v, V::Integer(_) | V::Float(_))) {
        Data::F64(
            values
                .map(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
                .collect(),
        )
    } else if all.iter().all(|v| matches!(v, V::String(_))) {
        Data::Str(values.map(|v| v.as_str().map(String::from)).collect())
    } else if all.iter().all(|v| matches!(v, V::Boolean(_))) {
        Data::Bool(values.map(|v| v.as_bool()).collect())
    } else {
        Data::Str(
            values
                .map(|v| {
                    let mut s = String::new();
                    write!(s, "{v}").expect("writing to a String");
                    Some(s)
                })
                .collect(),
        )
    }
}
