//! Reading the files a user hands us — scenarios, hardware profiles, traces — and the one error
//! type for bad input.
//!
//! Every stage that reads a file goes through [`SourceFile`], so every bad-input error names the
//! file, the line and column, the field's dotted path and what would be valid, and the CLI maps it
//! to exit code 2. Core code (simulation, capacity, cost) never sees these types: it receives
//! validated domain values.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use toml::Spanned;

/// A problem with something the user gave us. Rendered as
/// `file:line:col: field: message`, then the offending source line with a caret, then help.
/// The details are boxed so that `Result<T, InputError>` stays small; read them through `Deref`.
#[derive(Debug, Clone, PartialEq)]
pub struct InputError(Box<InputErrorDetails>);

/// What an [`InputError`] says.
#[derive(Debug, Clone, PartialEq)]
pub struct InputErrorDetails {
    /// The file as the user named it (or an embedded profile's name).
    pub file: Option<String>,
    /// 1-based line and column of the offending text, when known.
    pub position: Option<(usize, usize)>,
    /// Dotted path of the field, e.g. `costs.pue` or `tier[1].profile`.
    pub field: Option<String>,
    /// What is wrong, lowercase, naming the bad value.
    pub message: String,
    /// What would be valid.
    pub help: Option<String>,
    /// The source line with a caret under the span.
    pub snippet: Option<String>,
}

impl std::ops::Deref for InputError {
    type Target = InputErrorDetails;
    fn deref(&self) -> &InputErrorDetails {
        &self.0
    }
}

impl std::ops::DerefMut for InputError {
    fn deref_mut(&mut self) -> &mut InputErrorDetails {
        &mut self.0
    }
}

impl InputError {
    /// An error with only a message (no file known).
    pub fn new(message: impl Into<String>) -> Self {
        InputError(Box::new(InputErrorDetails {
            file: None,
            position: None,
            field: None,
            message: message.into(),
            help: None,
            snippet: None,
        }))
    }

    /// Attach what would be valid.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Attach a file name (used when the error arose outside a [`SourceFile`]).
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        if self.file.is_none() {
            self.file = Some(file.into());
        }
        self
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.position) {
            (Some(file), Some((line, col))) => write!(f, "{file}:{line}:{col}: ")?,
            (Some(file), None) => write!(f, "{file}: ")?,
            _ => {}
        }
        if let Some(field) = &self.field {
            write!(f, "{field}: ")?;
        }
        write!(f, "{}", self.message)?;
        if let Some(snippet) = &self.snippet {
            write!(f, "\n{snippet}")?;
        }
        if let Some(help) = &self.help {
            write!(f, "\n  = help: {help}")?;
        }
        Ok(())
    }
}

impl std::error::Error for InputError {}

/// The text of one input file and the name to show for it.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The name shown in messages: the path as given, or `embedded:<name>` for built-ins.
    pub name: String,
    /// The path on disk, when there is one (relative paths inside the file resolve against its folder).
    pub path: Option<PathBuf>,
    pub text: String,
}

impl SourceFile {
    /// Read a file; a missing or unreadable file is an [`InputError`] naming it.
    pub fn read(path: &Path) -> Result<Self, InputError> {
        let name = path.display().to_string();
        match std::fs::read_to_string(path) {
            Ok(text) => Ok(SourceFile {
                name,
                path: Some(path.to_path_buf()),
                text,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(InputError::new("no such file").in_file(name))
            }
            Err(e) => Err(InputError::new(format!("cannot read the file: {e}")).in_file(name)),
        }
    }

    /// A source that lives in memory (an embedded profile, a test string).
    pub fn from_text(name: impl Into<String>, text: impl Into<String>) -> Self {
        SourceFile {
            name: name.into(),
            path: None,
            text: text.into(),
        }
    }

    /// The folder relative paths in this file are resolved against.
    pub fn base_dir(&self) -> PathBuf {
        self.path
            .as_ref()
            .and_then(|p| p.parent())
            .map(Path::to_path_buf)
            .unwrap_or_default()
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text[..floor_char_boundary(&self.text, offset)];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = before[line_start..].chars().count() + 1;
        (line, col)
    }

    /// The source line holding `span.start`, with a caret line under the span.
    fn snippet(&self, span: &Range<usize>) -> String {
        let start = floor_char_boundary(&self.text, span.start.min(self.text.len()));
        let line_start = self.text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = self.text[start..]
            .find('\n')
            .map_or(self.text.len(), |i| start + i);
        let line_text = self.text[line_start..line_end].trim_end_matches('\r');
        let (line_no, col) = self.line_col(start);
        let end = floor_char_boundary(&self.text, span.end.clamp(start, line_end));
        let width = self.text[start..end].chars().count().max(1);
        let gutter = line_no.to_string().len();
        format!(
            "{:gutter$} |\n{line_no} | {line_text}\n{:gutter$} | {}{}",
            "",
            "",
            " ".repeat(col - 1),
            "^".repeat(width),
        )
    }

    /// An error located at `span` in this file.
    pub fn error_at(
        &self,
        span: Option<Range<usize>>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> InputError {
        let field: String = field.into();
        InputError(Box::new(InputErrorDetails {
            file: Some(self.name.clone()),
            position: span.as_ref().map(|s| self.line_col(s.start)),
            field: (!field.is_empty()).then_some(field),
            message: message.into(),
            help: None,
            snippet: span.as_ref().map(|s| self.snippet(s)),
        }))
    }

    /// An error at a spanned value.
    pub fn error<T>(
        &self,
        value: &Spanned<T>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> InputError {
        self.error_at(Some(value.span()), field, message)
    }

    /// A string key naming one of a closed set of choices (`kv_allocation = "paged"`): the
    /// choice `parse` reads from it, or an error at the value saying it is not a `what` and,
    /// as help, `valid` (each valid name and what it means).
    pub fn choice<T>(
        &self,
        value: &Spanned<String>,
        field: impl Into<String>,
        what: &str,
        valid: &str,
        parse: impl FnOnce(&str) -> Option<T>,
    ) -> Result<T, InputError> {
        parse(value.get_ref()).ok_or_else(|| {
            self.error(
                value,
                field,
                format!("= \"{}\" is not a {what}", value.get_ref()),
            )
            .with_help(format!("valid: {valid}"))
        })
    }

    /// Deserialize the whole file into its raw `*File` mirror. TOML syntax and schema errors come
    /// back with line, column, the field's path and, for a misspelt key or variant, a suggestion.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, InputError> {
        toml::from_str(&self.text).map_err(|e| self.toml_error(&e))
    }

    fn toml_error(&self, e: &toml::de::Error) -> InputError {
        let span = e.span();
        let raw = e.message().trim().to_string();
        let field = span
            .as_ref()
            .and_then(|s| key_path_at(&self.text, s.start))
            .unwrap_or_default();
        let (message, help) = explain_serde_message(&raw);
        let mut err = self.error_at(span, field, message);
        err.help = help;
        err
    }
}

/// Turn serde's "unknown field `x`, expected one of `a`, `b`" into a message and a
/// "did you mean" help line; other messages pass through.
fn explain_serde_message(raw: &str) -> (String, Option<String>) {
    for what in ["field", "variant"] {
        let prefix = format!("unknown {what} `");
        let Some(rest) = raw.strip_prefix(&prefix) else {
            continue;
        };
        let Some((bad, tail)) = rest.split_once('`') else {
            continue;
        };
        let expected: Vec<&str> = tail.split('`').skip(1).step_by(2).collect();
        let kind = if what == "field" { "key" } else { "value" };
        let message = format!("unknown {kind} `{bad}`");
        let help = if expected.is_empty() {
            format!("this table takes no {kind} `{bad}`")
        } else if let Some(best) = closest(bad, &expected) {
            format!(
                "did you mean `{best}`? valid {kind}s here: {}",
                expected.join(", ")
            )
        } else {
            format!("valid {kind}s here: {}", expected.join(", "))
        };
        return (message, Some(help));
    }
    // serde speaks Rust types; say what a TOML author would write instead.
    let plain = raw
        .replace("expected f64", "expected a number")
        .replace("expected i64", "expected a whole number")
        .replace("expected u32", "expected a whole number ≥ 0")
        .replace("expected u64", "expected a whole number ≥ 0");
    (plain, None)
}

/// The candidate nearest to `word`, if it is plausibly what was meant: a small edit distance
/// (a typo) or one being a prefix of the other (`pue_ratio` for `pue`).
pub fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let typo = candidates
        .iter()
        .map(|c| (strsim::levenshtein(word, c), *c))
        .filter(|(d, c)| *d <= (c.len().max(word.len()) / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c);
    typo.or_else(|| {
        candidates
            .iter()
            .filter(|c| {
                c.len() >= 3 && word.len() >= 3 && (word.starts_with(**c) || c.starts_with(word))
            })
            .max_by_key(|c| c.len())
            .copied()
    })
}

/// The dotted key path (`tier[1].options`) of the innermost key or value covering `offset`.
pub fn key_path_at(text: &str, offset: usize) -> Option<String> {
    let table = toml::de::DeTable::parse(text).ok()?;
    let mut path = String::new();
    walk_table(table.get_ref(), offset, &mut path);
    (!path.is_empty()).then_some(path)
}

fn walk_table(table: &toml::de::DeTable<'_>, offset: usize, path: &mut String) -> bool {
    for (key, value) in table.iter() {
        let in_key = key.span().contains(&offset);
        let in_value = value.span().contains(&offset);
        let in_child = matches!(
            value.get_ref(),
            toml::de::DeValue::Table(_) | toml::de::DeValue::Array(_)
        );
        if in_key || in_value || in_child {
            let before = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(key.get_ref());
            if walk_value(value.get_ref(), offset, path) || in_key || in_value {
                return true;
            }
            path.truncate(before);
        }
    }
    false
}

fn walk_value(value: &toml::de::DeValue<'_>, offset: usize, path: &mut String) -> bool {
    match value {
        toml::de::DeValue::Table(t) => walk_table(t, offset, path),
        toml::de::DeValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let before = path.len();
                path.push_str(&format!("[{i}]"));
                if item.span().contains(&offset) | walk_value(item.get_ref(), offset, path) {
                    return true;
                }
                path.truncate(before);
            }
            false
        }
        _ => false,
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A number as a range error shows it: as written for everyday magnitudes, in exponent form
/// beyond them, so 1e308 reads "1e308" and not as 309 digits.
pub fn shown(x: f64) -> String {
    let a = x.abs();
    if a == 0.0 || (1e-6..1e15).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// Checks on one spanned number, so every range error reads the same way:
/// "`pue` = -1 is out of range" + "valid: …".
pub struct NumberCheck<'a> {
    pub source: &'a SourceFile,
    pub field: &'a str,
}

impl NumberCheck<'_> {
    /// The value must be finite and within `[min, max]` (either bound optional, inclusive unless
    /// `strict_min`); `valid` describes the range in words for the help line.
    pub fn range(
        &self,
        v: &Spanned<f64>,
        min: Option<f64>,
        strict_min: bool,
        max: Option<f64>,
        valid: &str,
    ) -> Result<f64, InputError> {
        let x = *v.get_ref();
        let bad = !x.is_finite()
            || min.is_some_and(|m| if strict_min { x <= m } else { x < m })
            || max.is_some_and(|m| x > m);
        if bad {
            let what = if x.is_nan() {
                "is not a number (nan)".to_string()
            } else if x.is_infinite() {
                format!("is infinite ({x})")
            } else {
                format!("= {} is out of range", shown(x))
            };
            return Err(self
                .source
                .error(v, self.field, what)
                .with_help(format!("valid: {valid}")));
        }
        Ok(x)
    }

    /// A finite number > 0.
    pub fn positive(&self, v: &Spanned<f64>, valid: &str) -> Result<f64, InputError> {
        self.range(v, Some(0.0), true, None, valid)
    }

    /// A finite number ≥ 0.
    pub fn non_negative(&self, v: &Spanned<f64>, valid: &str) -> Result<f64, InputError> {
        self.range(v, Some(0.0), false, None, valid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Costs {
        pue: f64,
        electricity_usd_per_kwh: Option<f64>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Doc {
        name: String,
        costs: Costs,
        tier: Vec<Tier>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Tier {
        profile: String,
    }

    #[test]
    fn unknown_key_names_line_column_path_and_suggestion() {
        let src = SourceFile::from_text(
            "s.toml",
            "name = \"x\"\n[costs]\npue = 1.5\nelectricity_usd_per_kwhh = 0.1\n",
        );
        let err = src.parse::<Doc>().unwrap_err();
        assert_eq!(err.position, Some((4, 1)));
        assert_eq!(err.field.as_deref(), Some("costs.electricity_usd_per_kwhh"));
        assert_eq!(err.message, "unknown key `electricity_usd_per_kwhh`");
        assert!(
            err.help
                .as_deref()
                .unwrap()
                .starts_with("did you mean `electricity_usd_per_kwh`?")
        );
        let shown = err.to_string();
        assert!(shown.starts_with("s.toml:4:1: costs.electricity_usd_per_kwhh: unknown key"));
        assert!(shown.contains("4 | electricity_usd_per_kwhh = 0.1"));
    }

    #[test]
    fn type_error_inside_array_of_tables_has_indexed_path() {
        let src = SourceFile::from_text(
            "s.toml",
            "name = \"x\"\n[costs]\npue = 1.5\n[[tier]]\nprofile = \"a\"\n[[tier]]\nprofile = 3\n",
        );
        let err = src.parse::<Doc>().unwrap_err();
        assert_eq!(err.position, Some((7, 11)));
        assert_eq!(err.field.as_deref(), Some("tier[1].profile"));
        assert!(err.message.contains("string"), "{}", err.message);
    }

    #[test]
    fn syntax_error_has_position() {
        let src = SourceFile::from_text("s.toml", "name = \"x\"\n[costs\npue = 1\n");
        let err = src.parse::<Doc>().unwrap_err();
        assert_eq!(err.position.map(|p| p.0), Some(2));
        assert!(err.to_string().starts_with("s.toml:2:"));
    }

    #[test]
    fn missing_file_is_named() {
        let err = SourceFile::read(Path::new("no/such/scenario.toml")).unwrap_err();
        assert_eq!(err.to_string(), "no/such/scenario.toml: no such file");
    }

    #[test]
    fn number_checks_reject_nan_infinite_and_out_of_range() {
        #[derive(Deserialize)]
        struct N {
            a: Spanned<f64>,
            b: Spanned<f64>,
            c: Spanned<f64>,
        }
        let src = SourceFile::from_text("n.toml", "a = nan\nb = -inf\nc = -2.5\n");
        let n: N = src.parse().unwrap();
        let check = |field| NumberCheck {
            source: &src,
            field,
        };
        let e = check("a").positive(&n.a, "a number > 0").unwrap_err();
        assert!(e.message.contains("nan"));
        let e = check("b").positive(&n.b, "a number > 0").unwrap_err();
        assert!(e.message.contains("infinite"));
        let e = check("c").non_negative(&n.c, "a number ≥ 0").unwrap_err();
        assert_eq!(e.position, Some((3, 5)));
        assert_eq!(e.message, "= -2.5 is out of range");
        assert_eq!(e.help.as_deref(), Some("valid: a number ≥ 0"));
    }

    #[test]
    fn closest_only_suggests_plausible_typos() {
        assert_eq!(
            closest("on-dmand", &["on-prem", "on-demand"]),
            Some("on-demand")
        );
        assert_eq!(closest("zzzzzz", &["on-prem", "on-demand"]), None);
        assert_eq!(closest("pue_ratio", &["pue", "discount_rate"]), Some("pue"));
    }
}
