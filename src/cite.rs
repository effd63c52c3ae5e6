//! Cited numbers: every figure a planner stakes a budget on carries where it came from.
//!
//! A hardware profile lists its sources once (`[sources.<key>]`, each with a title and a date) and
//! every number refers to one of them, saying whether it is taken as written, derived from sourced
//! numbers (with the arithmetic in `note`), an estimate, or measured by `tco-sim calibrate`. The
//! scenario's cost defaults are cited the same way. Reports carry these through unchanged.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::input::{InputError, SourceFile, closest};

/// How a number relates to its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// Taken from the source as written.
    #[default]
    Cited,
    /// Computed from sourced numbers; the arithmetic is in the note.
    Derived,
    /// An estimate or an unverified figure; reports flag it.
    Estimate,
    /// Measured on real hardware (by `tco-sim calibrate` or a benchmark named in the note).
    Measured,
    /// Given by the user in the scenario file, without a further source.
    UserInput,
    /// Fitted to published benchmark results by the accuracy suite (`tco-sim accuracy --fit`);
    /// the note names the fit rows of `data/accuracy.toml`.
    Fit,
}

impl Basis {
    pub fn label(self) -> &'static str {
        match self {
            Basis::Cited => "cited",
            Basis::Derived => "derived",
            Basis::Estimate => "estimate",
            Basis::Measured => "measured",
            Basis::UserInput => "user input",
            Basis::Fit => "fit",
        }
    }
}

/// One source: a document, a page, a measurement run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Source {
    pub key: String,
    pub title: String,
    pub url: Option<String>,
    /// Publication or snapshot date, `YYYY`, `YYYY-MM` or `YYYY-MM-DD`.
    pub date: String,
}

/// A number with its provenance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cited {
    pub value: f64,
    pub basis: Basis,
    pub source: Source,
    /// Arithmetic for derived values, caveats for estimates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// A measured value's spread: the standard deviation of its logarithm (`log_sd` in a file;
    /// `calibrate --from` writes its fit's residual). The uncertainty analysis draws the value
    /// lognormal with its median here; `None`: a measured value is not varied unless a scenario
    /// names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_sd: Option<f64>,
}

/// The largest `log_sd` a measured value may carry: σ = 1 in ln terms puts P10–P90 at a factor
/// of 0.28–3.6 of the value, beyond which a number is not a measurement but a guess.
pub const MAX_LOG_SD: f64 = 1.0;

impl Cited {
    /// A value stated by the user in a scenario file, located by file and line.
    pub fn user(value: f64, where_: String) -> Self {
        Cited {
            value,
            basis: Basis::UserInput,
            source: Source {
                key: "scenario".into(),
                title: where_,
                url: None,
                date: String::new(),
            },
            note: None,
            log_sd: None,
        }
    }

    /// The same provenance with a value converted to other units (GB/s → B/s).
    pub fn scaled(&self, factor: f64) -> Cited {
        Cited {
            value: self.value * factor,
            ..self.clone()
        }
    }

    /// "source title (date)" for tables and reports.
    pub fn citation(&self) -> String {
        if self.source.date.is_empty() {
            self.source.title.clone()
        } else {
            format!("{} ({})", self.source.title, self.source.date)
        }
    }
}

impl fmt::Display for Cited {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} [{}: {}]",
            self.value,
            self.basis.label(),
            self.citation()
        )
    }
}

/// `[sources.<key>]` as written in a file.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SourceFileEntry {
    pub title: Spanned<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub date: Spanned<String>,
}

/// `{ value = …, source = "key", basis = "derived", note = "…" }` as written in a file.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CitedFileEntry {
    pub value: Spanned<f64>,
    pub source: Spanned<String>,
    #[serde(default, skip_serializing_if = "is_cited")]
    pub basis: Basis,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Measured values only: the standard deviation of the value's logarithm, how far the
    /// measurement may be off ([`Cited::log_sd`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_sd: Option<Spanned<f64>>,
}

fn is_cited(b: &Basis) -> bool {
    *b == Basis::Cited
}

/// Validated sources of one file, by key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sources(pub BTreeMap<String, Source>);

impl Sources {
    /// Check every source has a title and a well-formed date.
    pub fn from_file(
        src: &SourceFile,
        entries: &BTreeMap<String, SourceFileEntry>,
    ) -> Result<Self, InputError> {
        let mut out = BTreeMap::new();
        for (key, e) in entries {
            let field = format!("sources.{key}");
            if e.title.get_ref().trim().is_empty() {
                return Err(src
                    .error(&e.title, format!("{field}.title"), "the title is empty")
                    .with_help("name the document, page or measurement the numbers come from"));
            }
            if !is_date(e.date.get_ref()) {
                return Err(src
                    .error(
                        &e.date,
                        format!("{field}.date"),
                        format!("`{}` is not a date", e.date.get_ref()),
                    )
                    .with_help(
                        "valid: YYYY, YYYY-MM or YYYY-MM-DD (the publication or snapshot date)",
                    ));
            }
            out.insert(
                key.clone(),
                Source {
                    key: key.clone(),
                    title: e.title.get_ref().trim().to_string(),
                    url: e.url.clone(),
                    date: e.date.get_ref().clone(),
                },
            );
        }
        Ok(Sources(out))
    }

    /// Resolve a cited entry: its source key must exist, a derived value must show its arithmetic.
    pub fn resolve(
        &self,
        src: &SourceFile,
        field: &str,
        e: &CitedFileEntry,
    ) -> Result<Cited, InputError> {
        let key = e.source.get_ref();
        let Some(source) = self.0.get(key) else {
            let keys: Vec<&str> = self.0.keys().map(String::as_str).collect();
            let help = match closest(key, &keys) {
                Some(k) => format!(
                    "did you mean `{k}`? sources in this file: {}",
                    keys.join(", ")
                ),
                None if keys.is_empty() => "add a [sources.<key>] table with title and date".into(),
                None => format!("sources in this file: {}", keys.join(", ")),
            };
            return Err(src
                .error(
                    &e.source,
                    format!("{field}.source"),
                    format!("unknown source `{key}`"),
                )
                .with_help(help));
        };
        if e.basis == Basis::Derived && e.note.as_deref().is_none_or(|n| n.trim().is_empty()) {
            return Err(src
                .error(
                    &e.value,
                    field,
                    "a derived value needs a `note` with its arithmetic",
                )
                .with_help("e.g. note = \"80 cores x 3.0 GHz x 16 FLOP/cycle\""));
        }
        let log_sd = match &e.log_sd {
            None => None,
            Some(sd) if e.basis != Basis::Measured => {
                return Err(src
                    .error(
                        sd,
                        format!("{field}.log_sd"),
                        format!(
                            "`log_sd` is the spread of a measured value; this one's basis is \"{}\"",
                            e.basis.label()
                        ),
                    )
                    .with_help(
                        "remove log_sd (an estimate's range comes from its rule, a fitted \
                         constant's from the accuracy suite), or vary it by its path in a \
                         scenario's [uncertainty] table",
                    ));
            }
            Some(sd) => {
                let v = *sd.get_ref();
                if !(v > 0.0 && v <= MAX_LOG_SD) {
                    return Err(src
                        .error(
                            sd,
                            format!("{field}.log_sd"),
                            format!("log_sd = {v} is outside (0, {MAX_LOG_SD}]"),
                        )
                        .with_help(
                            "give the standard deviation of ln(value), e.g. 0.05 for a value \
                             known to about 5 %; remove it for a value not to be varied",
                        ));
                }
                Some(v)
            }
        };
        Ok(Cited {
            value: *e.value.get_ref(),
            basis: e.basis,
            source: source.clone(),
            note: e.note.clone(),
            log_sd,
        })
    }
}

/// `YYYY`, `YYYY-MM` or `YYYY-MM-DD` with plausible ranges.
pub fn is_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let num = |p: &str, len: usize, lo: u32, hi: u32| {
        p.len() == len
            && p.bytes().all(|b| b.is_ascii_digit())
            && p.parse::<u32>().is_ok_and(|v| (lo..=hi).contains(&v))
    };
    match parts.as_slice() {
        [y] => num(y, 4, 1990, 2100),
        [y, m] => num(y, 4, 1990, 2100) && num(m, 2, 1, 12),
        [y, m, d] => num(y, 4, 1990, 2100) && num(m, 2, 1, 12) && num(d, 2, 1, 31),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        for ok in ["2020", "2020-06", "2026-01-21"] {
            assert!(is_date(ok), "{ok}");
        }
        for bad in ["", "n.d.", "2020-13", "20-06", "2020-06-32", "2020/06"] {
            assert!(!is_date(bad), "{bad}");
        }
    }

    #[derive(Deserialize)]
    struct Doc {
        x: CitedFileEntry,
        sources: BTreeMap<String, SourceFileEntry>,
    }

    fn resolve(text: &str) -> Result<Cited, InputError> {
        let src = SourceFile::from_text("p.toml", text);
        let doc: Doc = src.parse()?;
        let sources = Sources::from_file(&src, &doc.sources)?;
        sources.resolve(&src, "x", &doc.x)
    }

    #[test]
    fn resolves_a_cited_value() {
        let c = resolve(
            "x = { value = 3.0, source = \"heise\" }\n[sources.heise]\ntitle = \"heise.de SKU table\"\ndate = \"2020-06\"\n",
        )
        .unwrap();
        assert_eq!(c.value, 3.0);
        assert_eq!(c.basis, Basis::Cited);
        assert_eq!(c.citation(), "heise.de SKU table (2020-06)");
    }

    #[test]
    fn a_measured_value_carries_its_spread_and_nothing_else_may() {
        let src = "\n[sources.run]\ntitle = \"our run\"\ndate = \"2026-12\"\n";
        let c = resolve(&format!(
            "x = {{ value = 0.4, source = \"run\", basis = \"measured\", log_sd = 0.05 }}{src}"
        ))
        .unwrap();
        assert_eq!(c.log_sd, Some(0.05));
        let c = resolve(&format!(
            "x = {{ value = 0.4, source = \"run\", basis = \"measured\" }}{src}"
        ))
        .unwrap();
        assert_eq!(c.log_sd, None);
        let e = resolve(&format!(
            "x = {{ value = 0.4, source = \"run\", basis = \"estimate\", log_sd = 0.05 }}{src}"
        ))
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("p.toml:1:") && e.contains("x.log_sd") && e.contains("\"estimate\""),
            "{e}"
        );
        for bad in ["0.0", "-0.1", "1.5", "nan"] {
            let e = resolve(&format!(
                "x = {{ value = 0.4, source = \"run\", basis = \"measured\", log_sd = {bad} }}{src}"
            ))
            .unwrap_err()
            .to_string();
            assert!(
                e.contains("outside (0, 1]") && e.contains("x.log_sd"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn unknown_source_suggests_the_nearest() {
        let e = resolve(
            "x = { value = 3.0, source = \"hiese\" }\n[sources.heise]\ntitle = \"t\"\ndate = \"2020\"\n",
        )
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("x.source"));
        assert!(e.help.clone().unwrap().starts_with("did you mean `heise`?"));
    }

    #[test]
    fn derived_without_arithmetic_is_rejected() {
        let e = resolve(
            "x = { value = 3.0, source = \"s\", basis = \"derived\" }\n[sources.s]\ntitle = \"t\"\ndate = \"2020\"\n",
        )
        .unwrap_err();
        assert!(e.message.contains("note"));
    }

    #[test]
    fn undated_source_is_rejected() {
        let e = resolve(
            "x = { value = 3.0, source = \"s\" }\n[sources.s]\ntitle = \"t\"\ndate = \"n.d.\"\n",
        )
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("sources.s.date"));
        assert_eq!(e.position, Some((4, 8)));
    }
}
