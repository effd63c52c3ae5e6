//! Shared reading of measured files (traces, rate series, a tier's measured service times): CSV
//! rows and JSON lines with their byte positions, so every malformed value becomes an
//! [`InputError`] naming the file, the line, the column and what would be valid.

use std::ops::Range;

use super::MAX_TRACE_TOKENS;
use crate::input::{InputError, SourceFile};
use crate::units::CivilDate;

/// A CSV reader over a whole file. Lines may end in LF or CRLF (the Azure traces use CRLF and no
/// final newline); spaces around fields are trimmed; every row must have as many fields as the
/// first.
pub(super) fn csv_reader(text: &str, has_headers: bool) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .has_headers(has_headers)
        .trim(csv::Trim::All)
        .flexible(false)
        .from_reader(text.as_bytes())
}

/// The byte offset where `record` starts in `text`. The csv crate reports a record's position
/// before the line ending of the record above it, so line endings are skipped here.
pub(super) fn record_start(text: &str, record: &csv::StringRecord) -> Option<usize> {
    skip_line_endings(text, record.position()?.byte() as usize)
}

fn skip_line_endings(text: &str, mut at: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    while at < bytes.len() && (bytes[at] == b'\r' || bytes[at] == b'\n') {
        at += 1;
    }
    (at <= bytes.len()).then_some(at)
}

/// Where `record` starts, cheaply kept so its line can be named later, if an error needs it.
pub(super) fn record_mark(record: &csv::StringRecord) -> usize {
    record.position().map_or(0, |p| p.byte() as usize)
}

/// The 1-based line of a [`record_mark`]. Counting lines scans the file up to the mark, so this
/// is only called when an error is reported.
pub(super) fn marked_line(src: &SourceFile, mark: usize) -> usize {
    skip_line_endings(&src.text, mark).map_or(0, |b| src.line_col(b).0)
}

/// The byte span of field `i` of `record` in the source text (exact for unquoted, untrimmed
/// fields; otherwise it still points into the right line).
pub(super) fn field_span(text: &str, record: &csv::StringRecord, i: usize) -> Option<Range<usize>> {
    // The record stores its fields back to back without separators: add one comma per field
    // before this one.
    let start = record_start(text, record)? + i;
    let r = record.range(i)?;
    Some(start + r.start..start + r.end.max(r.start + 1))
}

/// An error at field `i` of `record`, labelled with the column's name.
pub(super) fn field_error(
    src: &SourceFile,
    record: &csv::StringRecord,
    i: usize,
    column: &str,
    message: impl Into<String>,
) -> InputError {
    let span = field_span(&src.text, record, i).or_else(|| record_span(&src.text, record));
    src.error_at(span, column, message)
}

/// The span of the start of a record (its line).
pub(super) fn record_span(text: &str, record: &csv::StringRecord) -> Option<Range<usize>> {
    let start = record_start(text, record)?;
    Some(start..start + 1)
}

/// The numbers of the column headed `column` of a CSV file with a header row, each finite and
/// positive (measured times, say); an error names the file, the line and the column. `what`
/// says in an empty file's error what the file should hold.
pub(crate) fn positive_column(
    src: &SourceFile,
    column: &str,
    what: &str,
) -> Result<Vec<f64>, InputError> {
    if let Some(e) = empty_file_error(src, what) {
        return Err(e);
    }
    let mut reader = csv_reader(&src.text, true);
    let headers = reader.headers().map_err(|e| csv_error(src, &e))?.clone();
    let i = header_column(src, &headers, column, "")?;
    let mut out = Vec::new();
    let mut record = csv::StringRecord::new();
    while next_record(src, &mut reader, &mut record)? {
        let text = record.get(i).unwrap_or("");
        match text.parse::<f64>() {
            Ok(x) if x.is_finite() && x > 0.0 => out.push(x),
            _ => {
                return Err(field_error(
                    src,
                    &record,
                    i,
                    column,
                    format!("`{text}` is not a measured time"),
                )
                .with_help("valid: a finite number > 0, in the same unit on every row"));
            }
        }
    }
    Ok(out)
}

/// Read the next record into `record`: `false` at the end of the file, a malformed row an
/// error at its line.
pub(super) fn next_record(
    src: &SourceFile,
    reader: &mut csv::Reader<&[u8]>,
    record: &mut csv::StringRecord,
) -> Result<bool, InputError> {
    reader.read_record(record).map_err(|e| csv_error(src, &e))
}

/// The index of the column headed `name`, or an error at the header line listing the columns it
/// has, then `help` (what the file should have; may be empty).
pub(super) fn header_column(
    src: &SourceFile,
    headers: &csv::StringRecord,
    name: &str,
    help: &str,
) -> Result<usize, InputError> {
    headers.iter().position(|h| h == name).ok_or_else(|| {
        let have: Vec<&str> = headers.iter().collect();
        let help = if help.is_empty() {
            format!("columns found: {}", have.join(", "))
        } else {
            format!("columns found: {}; {help}", have.join(", "))
        };
        src.error_at(
            Some(0..src.text.find(['\r', '\n']).unwrap_or(src.text.len()).max(1)),
            "",
            format!("the header has no `{name}` column"),
        )
        .with_help(help)
    })
}

/// An error for a file with nothing but blank lines, or `None`.
pub(super) fn empty_file_error(src: &SourceFile, what: &str) -> Option<InputError> {
    src.text
        .trim()
        .is_empty()
        .then(|| src.error_at(None, "", format!("the file is empty: {what}")))
}

/// A CSV syntax error (wrong number of fields, bad quoting) as an [`InputError`] at its line.
pub(super) fn csv_error(src: &SourceFile, e: &csv::Error) -> InputError {
    let span = e
        .position()
        .and_then(|p| skip_line_endings(&src.text, p.byte() as usize))
        .map(|b| b..b + 1);
    let message = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("this row has {len} fields; the rows before it have {expected_len}"),
        csv::ErrorKind::Utf8 { .. } => "this row is not valid UTF-8 text".to_string(),
        _ => format!("malformed CSV: {e}"),
    };
    src.error_at(span, "", message)
        .with_help("one row per line, fields separated by commas")
}

/// The lines of a text with the byte offset where each starts; a trailing `\r` is dropped, so
/// LF and CRLF files read the same.
pub(super) fn lines_with_offsets(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    text.split('\n').map(move |line| {
        let start = offset;
        offset += line.len() + 1;
        (start, line.strip_suffix('\r').unwrap_or(line))
    })
}

/// Parse a finite number, or say what is wrong with it.
pub(super) fn parse_f64(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        Ok(x) => Err(format!("`{x}` is not a finite number")),
        Err(_) if text.is_empty() => Err("the value is empty".to_string()),
        Err(_) => Err(format!("`{text}` is not a number")),
    }
}

/// Parse a token count (a whole number from 0 to [`MAX_TRACE_TOKENS`]).
pub(super) fn parse_tokens(text: &str) -> Result<u32, String> {
    let n = text.parse::<u32>().map_err(|_| {
        if text.is_empty() {
            "the token count is empty".to_string()
        } else {
            format!("`{text}` is not a token count (a whole number ≥ 0)")
        }
    })?;
    check_tokens(n)
}

/// A token count within [`MAX_TRACE_TOKENS`], or say so.
pub(super) fn check_tokens(n: u32) -> Result<u32, String> {
    if n > MAX_TRACE_TOKENS {
        Err(format!(
            "{n} tokens is out of range (valid: 0 to {MAX_TRACE_TOKENS}, the longest context window published)"
        ))
    } else {
        Ok(n)
    }
}

/// Seconds (or another unit, via `ns_per_unit`) to integer nanoseconds, refusing values that do
/// not fit in ±292 years.
pub(super) fn to_ns(value: f64, ns_per_unit: f64) -> Result<i64, String> {
    let ns = (value * ns_per_unit).round();
    if ns.is_finite() && ns.abs() < 9.0e18 {
        Ok(ns as i64)
    } else {
        Err(format!("`{value}` is too large for a time stamp"))
    }
}

/// Parse `YYYY-MM-DD HH:MM:SS[.fffffffff]` (a `T` may replace the space; no time zone) into
/// nanoseconds since 1970-01-01 00:00:00. This is the Azure LLM trace's `TIMESTAMP` format
/// (7 fractional digits, 100 ns resolution).
pub(super) fn parse_datetime_ns(text: &str) -> Result<i64, String> {
    let bad = || format!("`{text}` is not a date-time YYYY-MM-DD HH:MM:SS[.fffffff]");
    let b = text.as_bytes();
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || !(b[10] == b' ' || b[10] == b'T')
        || b[13] != b':'
        || b[16] != b':'
    {
        return Err(bad());
    }
    let num = |r: Range<usize>| -> Option<i64> {
        let s = text.get(r)?;
        if s.bytes().all(|c| c.is_ascii_digit()) {
            s.parse().ok()
        } else {
            None
        }
    };
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute), Some(second)) = (
        num(0..4),
        num(5..7),
        num(8..10),
        num(11..13),
        num(14..16),
        num(17..19),
    ) else {
        return Err(bad());
    };
    let mut frac_ns = 0i64;
    if b.len() > 19 {
        let frac = &text[19..];
        let digits = frac.strip_prefix('.').ok_or_else(bad)?;
        if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        frac_ns = digits.parse::<i64>().map_err(|_| bad())? * 10i64.pow(9 - digits.len() as u32);
    }
    let date = CivilDate {
        year,
        month: month as u32,
        day: day as u32,
    };
    if !date.is_valid() || hour > 23 || minute > 59 || second > 59 {
        return Err(format!("`{text}` is not a valid date and time of day"));
    }
    let days = date.days();
    Ok(((days * 24 + hour) * 60 + minute) * 60_000_000_000 + second * 1_000_000_000 + frac_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datetimes_parse_to_unix_nanoseconds() {
        assert_eq!(parse_datetime_ns("1970-01-01 00:00:00"), Ok(0));
        assert_eq!(
            parse_datetime_ns("1970-01-02T00:00:01.5"),
            Ok(86_401_500_000_000)
        );
        // 2023-11-16 18:15:46.6805900 = 1,700,158,546.68059 s (checked with `date -u -d`).
        assert_eq!(
            parse_datetime_ns("2023-11-16 18:15:46.6805900"),
            Ok(1_700_158_546_680_590_000)
        );
        assert_eq!(
            parse_datetime_ns("2024-02-29 00:00:00"),
            Ok(1_709_164_800_000_000_000)
        );
        for bad in [
            "2023-02-29 00:00:00",
            "2023-13-01 00:00:00",
            "2023-11-16 24:00:00",
            "2023-11-16 18:15",
            "2023-11-16 18:15:46.",
            "2023-11-16 18:15:46,5",
            "2023-11-16 18:15:4x",
            "2023-11-16 18:15:46.1234567890",
            "",
        ] {
            assert!(parse_datetime_ns(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn lines_keep_offsets_and_drop_carriage_returns() {
        let v: Vec<_> = lines_with_offsets("a,b\r\nc\r\nd").collect();
        assert_eq!(v, vec![(0, "a,b"), (5, "c"), (8, "d")]);
    }
}
