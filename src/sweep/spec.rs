//! The sweep file and its manifest: a base scenario (or a list of them) and axes of overrides by
//! key path, crossed (`[grid]`) or walked together (`[zip]`), expanded into a fixed, ordered list
//! of points, each validated as a scenario before any point runs.
//!
//! An override is applied to the parsed scenario TOML, as written, and the result goes through the
//! normal scenario validation, so an axis can set anything a scenario file can and a bad value is
//! refused by the same checks. Errors in a point are moved back to the sweep file: to the axis
//! key for a bad path, to the value for a bad value.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Deserialize;
use toml::Spanned;

use super::pipeline::{self, Facts};
use crate::input::{InputError, SourceFile, closest};

/// The most points one sweep may expand to; a typo in a grid (a thousand values instead of ten)
/// should stop before any work, not after the manifest fills memory.
pub const MAX_POINTS: usize = 1_000_000;

/// The sweep file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepFile {
    /// The base scenario, relative to the sweep file.
    #[serde(default)]
    scenario: Option<Spanned<String>>,
    /// Whole scenario files, swept as the outermost axis.
    #[serde(default)]
    scenarios: Option<Spanned<Vec<Spanned<String>>>>,
    /// Size fleets with the analytic utilization bound instead of simulation (default false).
    #[serde(default)]
    analytic: Option<bool>,
    /// Axes crossed with each other, the first slowest.
    #[serde(default)]
    grid: BTreeMap<Spanned<String>, Spanned<Vec<Spanned<toml::Value>>>>,
    /// Axes of equal length walked together, crossed with the grid as one innermost axis.
    #[serde(default)]
    zip: BTreeMap<Spanned<String>, Spanned<Vec<Spanned<toml::Value>>>>,
}

/// One axis: a key path and its values, with where each was written.
#[derive(Debug, Clone)]
pub struct Axis {
    /// The key path as written, e.g. `traffic.peak_rps`; also the output column's name.
    pub name: String,
    pub values: Vec<toml::Value>,
    /// Whether this axis belongs to the `[zip]` group.
    pub zipped: bool,
    key_span: std::ops::Range<usize>,
    value_spans: Vec<std::ops::Range<usize>>,
}

/// A base scenario of the sweep, parsed but not yet validated.
#[derive(Debug, Clone)]
pub struct BaseScenario {
    /// As written in the sweep file (the `scenario` column).
    pub label: String,
    pub path: PathBuf,
    doc: toml::Table,
}

/// One point of the sweep: a base scenario and one value per axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Position in the manifest, from 0.
    pub index: u32,
    /// Which base scenario.
    pub scenario: usize,
    /// Index into each axis's values, in axis order.
    pub choice: Vec<usize>,
    /// The seed this point runs with (the scenario's, after overrides).
    pub seed: u64,
    pub horizon_years: u32,
}

/// Everything a run or a merge needs to know about a sweep, the same in every shard.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// The sweep file as named on the command line.
    pub file: String,
    pub scenarios: Vec<BaseScenario>,
    pub axes: Vec<Axis>,
    pub points: Vec<Point>,
    pub analytic: bool,
    /// The longest horizon of any point: the number of `units_year_*` columns.
    pub max_horizon_years: u32,
    /// FNV-1a of the tool version, the method and every point's scenario text: two runs with the
    /// same fingerprint compute the same rows, so their outputs may be resumed or merged.
    pub fingerprint: u64,
    /// Each axis's path, resolved in each base scenario (tier names become indices).
    paths: Vec<Vec<Vec<Segment>>>,
}

impl Manifest {
    /// Read a sweep file, expand it and validate every point. `seed` overrides the base
    /// scenarios' seed (an axis on `seed` still wins); `analytic` forces the analytic method.
    pub fn load(path: &Path, seed: Option<u64>, analytic: bool) -> Result<Manifest, InputError> {
        let src = SourceFile::read(path)?;
        Manifest::from_source(&src, seed, analytic)
    }

    /// [`Manifest::load`] on a file already read.
    pub fn from_source(
        src: &SourceFile,
        seed: Option<u64>,
        analytic: bool,
    ) -> Result<Manifest, InputError> {
        let f: SweepFile = src.parse()?;
        let scenarios = base_scenarios(src, &f, seed)?;
        let axes = axes(src, &f)?;
        let mut zip_len = None;
        for a in axes.iter().filter(|a| a.zipped) {
            match zip_len {
                None => zip_len = Some((a.values.len(), a.name.clone())),
                Some((n, ref first)) if n != a.values.len() => {
                    return Err(src
                        .error_at(
                            Some(a.key_span.clone()),
                            format!("zip.\"{}\"", a.name),
                            format!("has {} values, `{first}` has {n}", a.values.len()),
                        )
                        .with_help("axes under [zip] are walked together: give each the same number of values"));
                }
                Some(_) => {}
            }
        }
        // Resolve every axis path against every base scenario before expanding, so a bad path
        // is reported once, at its key, rather than once per point.
        let paths: Vec<Vec<Vec<Segment>>> = scenarios
            .iter()
            .map(|b| {
                axes.iter()
                    .map(|a| resolve_path(src, a, b, scenarios.len() > 1))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<_, _>>()?;
        for per_scenario in &paths {
            for (i, p) in per_scenario.iter().enumerate() {
                if let Some(j) = (0..i).find(|&j| per_scenario[j] == *p) {
                    return Err(src
                        .error_at(
                            Some(axes[i].key_span.clone()),
                            axes[i].name.clone(),
                            format!("sets the same key as `{}`", axes[j].name),
                        )
                        .with_help("sweep each key once"));
                }
            }
        }
        let choices = expand(src, &scenarios, &axes, zip_len.map(|z| z.0))?;
        let analytic = analytic || f.analytic.unwrap_or(false);
        let checked: Vec<Result<(Facts, u64), InputError>> = choices
            .par_iter()
            .map(|(s, choice)| {
                let text = point_text(&scenarios[*s], &paths[*s], &axes, choice);
                let point_src = point_source(&scenarios[*s], &text);
                let facts = pipeline::validate(&point_src)
                    .map_err(|e| relocate(src, e, &axes, &paths[*s], choice))?;
                Ok((facts, fnv1a(text.as_bytes(), FNV_OFFSET)))
            })
            .collect();
        let mut points = Vec::with_capacity(choices.len());
        let mut hash = fnv1a(env!("CARGO_PKG_VERSION").as_bytes(), FNV_OFFSET);
        hash = fnv1a(if analytic { b"analytic" } else { b"simulated" }, hash);
        for a in &axes {
            hash = fnv1a(a.name.as_bytes(), hash);
        }
        for (index, ((s, choice), checked)) in choices.into_iter().zip(checked).enumerate() {
            let (facts, text_hash) = checked?;
            hash = fnv1a(&text_hash.to_le_bytes(), hash);
            points.push(Point {
                index: index as u32,
                scenario: s,
                choice,
                seed: facts.seed,
                horizon_years: facts.horizon_years,
            });
        }
        Ok(Manifest {
            file: src.name.clone(),
            max_horizon_years: points.iter().map(|p| p.horizon_years).max().unwrap_or(0),
            scenarios,
            axes,
            points,
            analytic,
            fingerprint: hash,
            paths,
        })
    }

    /// The scenario text of one point: its base with its overrides applied.
    pub fn point_source(&self, point: &Point) -> SourceFile {
        let base = &self.scenarios[point.scenario];
        let text = point_text(base, &self.paths[point.scenario], &self.axes, &point.choice);
        point_source(base, &text)
    }

    /// The fingerprint as the 16 hex digits written into every output.
    pub fn fingerprint_hex(&self) -> String {
        format!("{:016x}", self.fingerprint)
    }
}

fn point_source(base: &BaseScenario, text: &str) -> SourceFile {
    SourceFile {
        name: base.path.display().to_string(),
        // Relative paths inside the scenario (traces, profiles_dir) resolve against its folder.
        path: Some(base.path.clone()),
        text: text.to_string(),
    }
}

fn base_scenarios(
    src: &SourceFile,
    f: &SweepFile,
    seed: Option<u64>,
) -> Result<Vec<BaseScenario>, InputError> {
    let listed: Vec<Spanned<String>> = match (&f.scenario, &f.scenarios) {
        (Some(s), None) => vec![s.clone()],
        (None, Some(list)) if !list.get_ref().is_empty() => list.get_ref().clone(),
        (None, Some(list)) => {
            return Err(src
                .error(list, "scenarios", "lists no scenario")
                .with_help("name at least one scenario file"));
        }
        (Some(s), Some(_)) => {
            return Err(src
                .error(
                    s,
                    "scenario",
                    "give either `scenario` or `scenarios`, not both",
                )
                .with_help("`scenarios = [\"a.toml\", \"b.toml\"]` sweeps whole files"));
        }
        (None, None) => {
            return Err(src
                .error_at(None, "", "names no scenario")
                .with_help("add `scenario = \"my-scenario.toml\"` (relative to the sweep file)"));
        }
    };
    let dir = src.base_dir();
    listed
        .iter()
        .map(|s| {
            let path = dir.join(s.get_ref());
            let scenario_src = SourceFile::read(&path).map_err(|e| {
                src.error(s, "scenario", e.message.clone())
                    .with_help(format!("looked for {}", path.display()))
            })?;
            let mut doc: toml::Table = scenario_src.parse()?;
            if let Some(seed) = seed {
                let v = i64::try_from(seed).map_err(|_| {
                    InputError::new(format!("--seed {seed} is too large"))
                        .with_help(format!("valid: 0 to {}", i64::MAX))
                })?;
                doc.insert("seed".into(), toml::Value::Integer(v));
            }
            // The base must be valid on its own, and its errors belong to its own file.
            let base_src = SourceFile {
                text: toml::to_string(&doc).expect("a parsed TOML table serializes"),
                ..scenario_src.clone()
            };
            if seed.is_some() {
                pipeline::validate(&base_src)?;
            } else {
                pipeline::validate(&scenario_src)?;
            }
            Ok(BaseScenario {
                label: s.get_ref().clone(),
                path,
                doc,
            })
        })
        .collect()
}

fn axes(src: &SourceFile, f: &SweepFile) -> Result<Vec<Axis>, InputError> {
    let mut out = Vec::new();
    for (table, zipped) in [(&f.grid, false), (&f.zip, true)] {
        for (key, values) in table {
            if values.get_ref().is_empty() {
                return Err(src
                    .error(values, key.get_ref().clone(), "has no values")
                    .with_help("an axis needs at least one value"));
            }
            out.push(Axis {
                name: key.get_ref().clone(),
                values: values
                    .get_ref()
                    .iter()
                    .map(|v| v.get_ref().clone())
                    .collect(),
                zipped,
                key_span: key.span(),
                value_spans: values.get_ref().iter().map(Spanned::span).collect(),
            });
        }
    }
    // The file's order, not the map's: the first grid axis written varies slowest.
    out.sort_by_key(|a| (a.zipped, a.key_span.start));
    for (i, a) in out.iter().enumerate() {
        if out[..i].iter().any(|b| b.name == a.name) {
            return Err(src
                .error_at(Some(a.key_span.clone()), a.name.clone(), "is swept twice")
                .with_help("a key may be under [grid] or [zip], not both"));
        }
        if super::table::FIXED_COLUMNS.contains(&a.name.as_str())
            || a.name.starts_with("units_year_")
        {
            return Err(src
                .error_at(
                    Some(a.key_span.clone()),
                    a.name.clone(),
                    "is not a scenario key: it names an output column",
                )
                .with_help("sweep keys of the scenario, e.g. `traffic.peak_rps` or `tier.<name>.max_batch`"));
        }
    }
    Ok(out)
}

/// Every point as (base scenario, value index per axis), in manifest order: the scenarios
/// outermost, then the grid axes in the order written, then the zip group.
fn expand(
    src: &SourceFile,
    scenarios: &[BaseScenario],
    axes: &[Axis],
    zip_len: Option<usize>,
) -> Result<Vec<(usize, Vec<usize>)>, InputError> {
    let grid: Vec<usize> = axes
        .iter()
        .filter(|a| !a.zipped)
        .map(|a| a.values.len())
        .collect();
    let mut total = scenarios.len();
    for n in grid.iter().copied().chain(zip_len) {
        total = total.saturating_mul(n);
    }
    if total > MAX_POINTS {
        return Err(src
            .error_at(None, "", format!("expands to {total} points"))
            .with_help(format!(
                "a sweep may have at most {MAX_POINTS} points; split it into several files"
            )));
    }
    let mut out = Vec::with_capacity(total);
    let per_scenario = total / scenarios.len().max(1);
    for s in 0..scenarios.len() {
        for k in 0..per_scenario {
            // Mixed radix, the last axis fastest.
            let mut rest = k;
            let zip_choice = zip_len.map(|n| {
                let c = rest % n;
                rest /= n;
                c
            });
            let mut choice = vec![0; grid.len()];
            for (slot, &n) in choice.iter_mut().zip(&grid).rev() {
                *slot = rest % n;
                rest /= n;
            }
            choice.extend(
                axes.iter()
                    .filter(|a| a.zipped)
                    .map(|_| zip_choice.unwrap_or(0)),
            );
            out.push((s, choice));
        }
    }
    Ok(out)
}

/// One step of a key path in the scenario document.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// The dotted path the scenario's own errors use: `tier[2].max_batch`.
fn dotted(path: &[Segment]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Segment::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Segment::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

fn tier_names(doc: &toml::Table) -> Vec<String> {
    doc.get("tier")
        .and_then(toml::Value::as_array)
        .map(|tiers| {
            tiers
                .iter()
                .map(|t| {
                    let field = |k: &str| t.get(k).and_then(toml::Value::as_str);
                    // A tier without a name is named after its profile, as in the scenario.
                    field("name").or(field("profile")).unwrap_or("").to_string()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Why a key path cannot be followed, before any value is tried.
enum PathProblem {
    Empty,
    NoTier { wanted: String, names: Vec<String> },
    BadIndex(String),
}

fn resolve_segments(path: &str, base: &BaseScenario) -> Result<Vec<Segment>, PathProblem> {
    let mut out = Vec::new();
    let mut rest = path;
    // `tier.<name>.key`: a [[tier]] by its name, which may itself hold dots or spaces.
    if let Some(after) = rest.strip_prefix("tier.") {
        let names = tier_names(&base.doc);
        let hit = names
            .iter()
            .enumerate()
            .filter(|(_, n)| {
                !n.is_empty()
                    && after
                        .strip_prefix(n.as_str())
                        .is_some_and(|r| r.is_empty() || r.starts_with('.'))
            })
            .max_by_key(|(_, n)| n.len());
        match hit {
            Some((i, n)) => {
                out.push(Segment::Key("tier".into()));
                out.push(Segment::Index(i));
                rest = after[n.len()..].trim_start_matches('.');
                if rest.is_empty() {
                    return Err(PathProblem::Empty);
                }
            }
            None => {
                let wanted = after.split('.').next().unwrap_or("").to_string();
                return Err(PathProblem::NoTier { wanted, names });
            }
        }
    }
    for part in rest.split('.') {
        let (key, mut indices) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if key.is_empty() {
            return Err(PathProblem::Empty);
        }
        out.push(Segment::Key(key.to_string()));
        while !indices.is_empty() {
            let close = indices
                .find(']')
                .ok_or_else(|| PathProblem::BadIndex(part.into()))?;
            let n: usize = indices[1..close]
                .parse()
                .map_err(|_| PathProblem::BadIndex(part.into()))?;
            out.push(Segment::Index(n));
            indices = &indices[close + 1..];
            if !indices.is_empty() && !indices.starts_with('[') {
                return Err(PathProblem::BadIndex(part.into()));
            }
        }
    }
    Ok(out)
}

fn resolve_path(
    src: &SourceFile,
    axis: &Axis,
    base: &BaseScenario,
    several: bool,
) -> Result<Vec<Segment>, InputError> {
    let in_which = if several {
        format!(" in {}", base.label)
    } else {
        String::new()
    };
    let at_key = |msg: String| src.error_at(Some(axis.key_span.clone()), axis.name.clone(), msg);
    let path = match resolve_segments(&axis.name, base) {
        Ok(p) => p,
        Err(PathProblem::Empty) => {
            return Err(at_key("is not a key path".into()).with_help(
                "write dotted keys as in the scenario: `traffic.peak_rps`, `tier.<name>.max_batch`",
            ));
        }
        Err(PathProblem::BadIndex(part)) => {
            return Err(at_key(format!("`{part}` is not a key or key[index]"))
                .with_help("an index is a whole number in brackets: `tier[0].max_batch`"));
        }
        Err(PathProblem::NoTier { wanted, names }) => {
            // Tier names may hold dots ("NVIDIA L4 g6.xlarge"), so the name typed may be any
            // number of the path's dotted parts: try each against each name.
            let after = axis.name.strip_prefix("tier.").unwrap_or_default();
            let parts: Vec<&str> = after.split('.').collect();
            let parts = &parts;
            let nearest = names
                .iter()
                .flat_map(|n| (1..parts.len()).map(move |k| (n, parts[..k].join("."))))
                .filter_map(|(n, typed)| {
                    let best = closest(&typed, &[n.as_str()])?;
                    Some((strsim::levenshtein(&typed, best), typed, best))
                })
                .min_by_key(|(d, _, _)| *d);
            let (wanted, help) = match nearest {
                Some((_, typed, best)) => (
                    typed,
                    format!(
                        "did you mean `{best}`? tiers{in_which}: {}",
                        names.join(", ")
                    ),
                ),
                None => (wanted, format!("tiers{in_which}: {}", names.join(", "))),
            };
            return Err(at_key(format!("no tier named `{wanted}`{in_which}")).with_help(help));
        }
    };
    // Walk what exists: a scalar in the way, or an index past the end, is a bad path. Missing
    // tables are fine (`costs.pue` where the scenario has no [costs]); unknown keys are left to
    // the scenario validation, which knows every valid key and suggests the nearest.
    let root = toml::Value::Table(base.doc.clone());
    let mut node = Some(&root);
    for (i, seg) in path.iter().enumerate() {
        let above = dotted(&path[..i]);
        let Some(n) = node else {
            if path[i..].iter().any(|s| matches!(s, Segment::Index(_))) {
                return Err(at_key(format!(
                    "`{above}` is not in the scenario{in_which}, so it has no entries"
                ))
                .with_help("index only arrays the scenario has, e.g. `tier[0]`"));
            }
            break;
        };
        node = match (seg, n) {
            (Segment::Key(k), toml::Value::Table(t)) => t.get(k),
            (Segment::Key(_), other) => {
                return Err(at_key(format!(
                    "`{above}` is {} {}{in_which}, not a table",
                    article(other.type_str()),
                    other.type_str()
                )));
            }
            (Segment::Index(j), toml::Value::Array(items)) => match items.get(*j) {
                Some(item) => Some(item),
                None => {
                    return Err(at_key(format!(
                        "`{}` is past the end{in_which}",
                        dotted(&path[..=i])
                    ))
                    .with_help(format!("`{above}` has {} entries, from 0", items.len())));
                }
            },
            (Segment::Index(_), _) => {
                return Err(at_key(format!("`{above}` is not an array{in_which}")));
            }
        };
    }
    Ok(path)
}

fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// Set `value` at `path` in `doc`, creating missing tables on the way.
fn set(doc: &mut toml::Table, path: &[Segment], value: toml::Value) {
    let Some((Segment::Key(first), rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        doc.insert(first.clone(), value);
        return;
    }
    let slot = doc
        .entry(first.clone())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    set_in(slot, rest, value);
}

fn set_in(node: &mut toml::Value, path: &[Segment], value: toml::Value) {
    match (path.first(), node) {
        (None, node) => *node = value,
        (Some(Segment::Index(i)), toml::Value::Array(items)) => {
            if let Some(item) = items.get_mut(*i) {
                set_in(item, &path[1..], value);
            }
        }
        (Some(Segment::Key(_)), toml::Value::Table(t)) => set(t, path, value),
        // Paths were checked against the document when the manifest was built.
        _ => {}
    }
}

fn point_text(
    base: &BaseScenario,
    paths: &[Vec<Segment>],
    axes: &[Axis],
    choice: &[usize],
) -> String {
    let mut doc = base.doc.clone();
    for ((a, path), &c) in axes.iter().zip(paths).zip(choice) {
        set(&mut doc, path, a.values[c].clone());
    }
    toml::to_string(&doc).expect("a TOML table serializes")
}

/// Move a point's validation error to the sweep file: to the axis whose key the error is about
/// (its key for an unknown key, its value otherwise), or else to the point's first value.
fn relocate(
    src: &SourceFile,
    e: InputError,
    axes: &[Axis],
    paths: &[Vec<Segment>],
    choice: &[usize],
) -> InputError {
    let field = e.field.clone().unwrap_or_default();
    let hit = paths.iter().position(|p| {
        let d = dotted(p);
        field == d
            || field.starts_with(&format!("{d}."))
            || field.starts_with(&format!("{d}["))
            || (!field.is_empty() && d.starts_with(&format!("{field}.")))
    });
    let values = || {
        axes.iter()
            .zip(choice)
            .map(|(a, &c)| format!("{} = {}", a.name, a.values[c]))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match hit {
        Some(j) => {
            let a = &axes[j];
            let unknown_key = e.message.starts_with("unknown key");
            let span = if unknown_key {
                a.key_span.clone()
            } else {
                a.value_spans[choice[j]].clone()
            };
            let message = if field == dotted(&paths[j]) || unknown_key {
                e.message.clone()
            } else {
                format!("{field}: {}", e.message)
            };
            let mut out = src.error_at(Some(span), a.name.clone(), message);
            out.help = e.help.clone();
            out
        }
        None => {
            let (name, span) = match axes.first() {
                Some(a) => (a.name.clone(), Some(a.value_spans[choice[0]].clone())),
                None => (String::new(), None),
            };
            let message = if field.is_empty() {
                e.message.clone()
            } else {
                format!("{field}: {}", e.message)
            };
            let mut out = src.error_at(span, name, message);
            out.help = Some(match &e.help {
                Some(h) => format!("{h}; at the point {}", values()),
                None => format!("at the point {}", values()),
            });
            out
        }
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a, 64-bit: a hash with a fixed definition, so a fingerprint means the same in every
/// build and on every node (std's hasher may change between releases).
fn fnv1a(bytes: &[u8], mut h: u64) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}
