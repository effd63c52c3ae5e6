//! The stage order of `src/lib.rs`, enforced: a module may use its own stage or earlier ones,
//! never a later one (issue 9). Every `crate::…` path in `src/` (in `use` lines and inline,
//! grouped imports included, `super::` resolved against the file's own module) is checked
//! against [`STAGES`]; a violation fails with the file, the line and the offending path.
//!
//! Comments are skipped: a doc link names a later stage to explain where data goes next,
//! which is not a dependency.

use std::path::{Path, PathBuf};

/// The stages in data-flow order, each with the top-level modules in it. `cost::inputs` (the
/// declarations of the cost assumptions, which scenario validation reads) is its own early
/// stage; the rest of `cost` (the formulas) comes after capacity.
const STAGES: &[(&str, &[&str])] = &[
    (
        "foundation",
        &["input", "cite", "rng", "format", "units", "output", "date"],
    ),
    ("domain", &["hardware", "workload", "traffic"]),
    ("models", &["perf", "sim", "calibrate"]),
    ("cost inputs", &["cost::inputs", "uncertainty::ranges"]),
    ("scenario", &["scenario"]),
    ("capacity", &["capacity", "accuracy"]),
    // `calibrate --from` predicts measured points with the capacity stage's server model.
    ("calibration fit", &["calibrate::fit"]),
    ("cost", &["cost"]),
    ("results", &["results", "uncertainty"]),
    ("report", &["report"]),
    ("glue", &["cli", "app", "sweep", "main", "lib"]),
];

/// The stage of a module path (`["cost", "inputs", "CostKey"]` → cost inputs), or `None` for a
/// module no stage lists.
fn stage_of(path: &[String]) -> Option<usize> {
    let first = path.first()?.as_str();
    let second = path.get(1).map(String::as_str);
    let name = if first == "cost" && second == Some("inputs") {
        "cost::inputs".to_string()
    } else if first == "uncertainty" && second == Some("ranges") {
        "uncertainty::ranges".to_string()
    } else if first == "calibrate" && second == Some("fit") {
        "calibrate::fit".to_string()
    } else {
        first.to_string()
    };
    STAGES
        .iter()
        .position(|(_, modules)| modules.contains(&name.as_str()))
}

/// The module path of a file under `src/`: `src/capacity/search.rs` → `["capacity", "search"]`,
/// `src/main.rs` → `["main"]`.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.last_mut()
        && let Some(stem) = last.strip_suffix(".rs")
    {
        *last = stem.to_string();
    }
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// One path found in a file: its line (1-based) and its segments from the crate root.
#[derive(Debug, PartialEq)]
struct Found {
    line: usize,
    path: Vec<String>,
}

/// The source with comments, string and character literals blanked to spaces (newlines kept,
/// so lines still count), so that braces and paths are the code's own.
fn code_only(text: &str) -> Vec<char> {
    let c: Vec<char> = text.chars().collect();
    let mut out = c.clone();
    let blank = |out: &mut Vec<char>, from: usize, to: usize| {
        for ch in &mut out[from..to.min(c.len())] {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
    };
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        let start = i;
        if c[i] == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && next == Some('*') {
            i += 2;
            while i + 1 < c.len() && !(c[i] == '*' && c[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c[i] == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0 || !is_ident(c[i - 1]))
        {
            // A raw string r#"…"#: ends at a quote followed by as many hashes.
            let mut j = i + 1;
            let mut hashes = 0;
            while j < c.len() && c[j] == '#' {
                hashes += 1;
                j += 1;
            }
            if j < c.len() && c[j] == '"' {
                j += 1;
                while j < c.len()
                    && !(c[j] == '"'
                        && c[j + 1..]
                            .iter()
                            .take(hashes)
                            .filter(|&&h| h == '#')
                            .count()
                            == hashes)
                {
                    j += 1;
                }
                i = j + 1 + hashes;
            } else {
                i += 1;
                continue;
            }
        } else if c[i] == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c[i] == '\'' && next == Some('\\') {
            // An escaped character literal ('\n', '\'', '\u{…}').
            i += 2;
            while i < c.len() && c[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else if c[i] == '\'' && c.get(i + 2) == Some(&'\'') {
            i += 3;
        } else {
            i += 1;
            continue;
        }
        blank(&mut out, start, i);
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Parse a path tree at `pos` (after a `::`): segments, possibly ending in a `{…}` group of
/// further trees. Returns every full path with the position where its own item starts (the
/// item inside a group, so a multi-line import reports the right line), and the position after
/// the tree.
type Paths = Vec<(Vec<String>, usize)>;

fn parse_tree(chars: &[char], mut pos: usize, prefix: Vec<String>) -> (Paths, usize) {
    let item_start = pos;
    let skip_ws = |p: &mut usize| {
        while *p < chars.len() && chars[*p].is_whitespace() {
            *p += 1;
        }
    };
    let mut path = prefix;
    loop {
        skip_ws(&mut pos);
        if pos < chars.len() && chars[pos] == '{' {
            pos += 1;
            let mut all = Vec::new();
            loop {
                skip_ws(&mut pos);
                if pos >= chars.len() || chars[pos] == '}' {
                    return (all, pos + 1);
                }
                let (mut sub, next) = parse_tree(chars, pos, path.clone());
                all.append(&mut sub);
                pos = next;
                skip_ws(&mut pos);
                if pos < chars.len() && chars[pos] == ',' {
                    pos += 1;
                }
            }
        }
        let start = pos;
        while pos < chars.len() && (is_ident(chars[pos]) || chars[pos] == '*') {
            pos += 1;
        }
        let seg: String = chars[start..pos].iter().collect();
        if !seg.is_empty() && seg != "self" && seg != "*" {
            path.push(seg);
        }
        skip_ws(&mut pos);
        if pos + 1 < chars.len() && chars[pos] == ':' && chars[pos + 1] == ':' {
            pos += 2;
            continue;
        }
        // `as Alias`, `,`, `;`, `)` or anything else ends the path.
        if chars[pos..].starts_with(&['a', 's', ' ']) {
            pos += 2;
            skip_ws(&mut pos);
            while pos < chars.len() && is_ident(chars[pos]) {
                pos += 1;
            }
        }
        return (vec![(path, item_start)], pos);
    }
}

fn starts(chars: &[char], at: usize, word: &str) -> bool {
    let w: Vec<char> = word.chars().collect();
    chars[at..].starts_with(&w)
}

/// Every `crate::…` and `super::…` path in `text`, resolved from the crate root for a file of
/// module `module`. Inline modules (`mod tests { … }`, `mod x86 { … }`) are followed, so
/// `super::` inside one is the file's own module.
fn crate_paths(text: &str, module: &[String]) -> Vec<Found> {
    let chars = code_only(text);
    let mut line_of = Vec::with_capacity(chars.len());
    let mut line = 1;
    for &c in &chars {
        line_of.push(line);
        if c == '\n' {
            line += 1;
        }
    }
    let mut out = Vec::new();
    // Inline modules open at this point: (name, brace depth inside it).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let at_word = i == 0 || !(is_ident(chars[i - 1]) || chars[i - 1] == '$');
        match chars[i] {
            '{' => depth += 1,
            '}' => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        if at_word && starts(&chars, i, "mod ") {
            let mut j = i + 4;
            let name_start = j;
            while j < chars.len() && is_ident(chars[j]) {
                j += 1;
            }
            let name: String = chars[name_start..j].iter().collect();
            while j < chars.len() && chars[j] == ' ' {
                j += 1;
            }
            if j < chars.len() && chars[j] == '{' && !name.is_empty() {
                depth += 1;
                inline.push((name, depth));
                i = j + 1;
                continue;
            }
        }
        let here: Vec<String> = module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(n, _)| n.clone()))
            .collect();
        let root: Option<(usize, Vec<String>)> = if at_word && starts(&chars, i, "crate::") {
            Some((7, vec![]))
        } else if at_word && starts(&chars, i, "super::") {
            let mut len = 0;
            let mut base = here;
            while starts(&chars, i + len, "super::") {
                base.pop();
                len += 7;
            }
            Some((len, base))
        } else {
            None
        };
        let Some((len, prefix)) = root else {
            i += 1;
            continue;
        };
        let (paths, end) = parse_tree(&chars, i + len, prefix);
        for (path, at) in paths {
            // Skip the blanks before an item in a group to reach its own line.
            let mut at = at;
            while at < chars.len() && chars[at].is_whitespace() {
                at += 1;
            }
            out.push(Found {
                line: line_of[at.min(chars.len() - 1)],
                path,
            });
        }
        // Braces of a `{…}` group were consumed by the parser, so depth is unchanged.
        i = end.max(i + 1);
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every path in `text` (a file at `rel` under `src/`) that breaks the stage order, as
/// "file:line: message".
fn violations(rel: &Path, text: &str) -> Vec<String> {
    let module = module_of(rel);
    let shown = Path::new("src").join(rel).display().to_string();
    let Some(own) = stage_of(&module) else {
        return vec![format!(
            "{shown}: module `{}` is in no stage; add it to STAGES here and to the diagram in src/lib.rs",
            module[0]
        )];
    };
    let mut out = Vec::new();
    for f in crate_paths(text, &module) {
        if f.path.is_empty() {
            continue;
        }
        let target = f.path.join("::");
        match stage_of(&f.path) {
            Some(s) if s > own => out.push(format!(
                "{shown}:{}: `crate::{target}`: {} (stage {own}, {}) uses {} (stage {s}, {}), a later stage",
                f.line,
                module.join("::"),
                STAGES[own].0,
                f.path[0],
                STAGES[s].0
            )),
            Some(_) => {}
            None => out.push(format!(
                "{shown}:{}: `crate::{target}`: `{}` is in no stage; add it to STAGES",
                f.line, f.path[0]
            )),
        }
    }
    out
}

#[test]
fn no_module_uses_a_later_stage() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 50, "found only {} files", files.len());
    let mut bad = Vec::new();
    let mut checked = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let rel = f.strip_prefix(&src).unwrap();
        checked += crate_paths(&text, &module_of(rel)).len();
        bad.extend(violations(rel, &text));
    }
    assert!(
        checked > 200,
        "found only {checked} crate paths: is the parser broken?"
    );
    assert!(bad.is_empty(), "stage order broken:\n{}", bad.join("\n"));
}

#[test]
fn every_module_of_lib_rs_has_a_stage() {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let modules: Vec<String> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';').to_string())
        .collect();
    assert!(modules.len() > 10, "{modules:?}");
    for m in &modules {
        assert!(
            stage_of(std::slice::from_ref(m)).is_some(),
            "`{m}` has no stage"
        );
    }
}

#[test]
fn a_later_stage_import_is_reported_with_file_line_and_path() {
    let text = "//! capacity, which reads crate::results in a comment only\n\
                use crate::perf::ServicePlan;\n\
                use crate::{\n    scenario::Scenario,\n    results::{Note, RunResults},\n};\n\
                fn f() { let _ = crate::cost::option_cost; let _ = \"crate::report\"; }\n";
    let v = violations(Path::new("capacity/search.rs"), text);
    assert_eq!(v.len(), 3, "{v:#?}");
    assert!(
        v[0].starts_with("src/capacity/search.rs:5: `crate::results::Note`"),
        "{}",
        v[0]
    );
    assert!(
        v[1].contains(":5: `crate::results::RunResults`"),
        "{}",
        v[1]
    );
    assert!(
        v[2].contains(":7: `crate::cost::option_cost`") && v[2].contains("a later stage"),
        "{}",
        v[2]
    );
}

#[test]
fn cost_inputs_is_its_own_early_stage_and_super_is_resolved() {
    // The declarations may be read by scenario; the formulas may not.
    assert!(violations(Path::new("scenario.rs"), "use crate::cost::inputs::Key;").is_empty());
    let v = violations(Path::new("scenario.rs"), "use crate::cost::option_cost;");
    assert_eq!(v.len(), 1, "{v:?}");
    // From cost/inputs.rs, `super::` is cost (the formulas): a later stage.
    let v = violations(Path::new("cost/inputs.rs"), "use super::FleetYear;");
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(v[0].contains("`crate::cost::FleetYear`"), "{}", v[0]);
    // Within a stage, `super::` is the module itself.
    assert!(
        violations(
            Path::new("capacity/search.rs"),
            "use super::{units_for, StopReason};"
        )
        .is_empty()
    );
    // A module no stage lists is reported, not passed.
    let v = violations(Path::new("plugins.rs"), "use crate::results::RunResults;");
    assert!(v[0].contains("in no stage"), "{v:?}");
}
