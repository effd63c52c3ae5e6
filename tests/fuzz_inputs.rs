//! Seeded mutation fuzzing of every input parser (issue 15): every shipped scenario, every shipped
//! hardware profile, the shipped trace and a ServeGen-style rate series, each mutated thousands of
//! times — numbers swapped for extremes, lines dropped, doubled, swapped, cut short.
//!
//! Each mutant must end one of two ways: a clean run, or a located [`InputError`] (exit 2 at the
//! command line). Never a panic, never an internal error (exit 1), and a run that succeeds writes
//! no `inf` or `NaN` into results.json or results.csv. Scenario mutants that validate are planned
//! with the analytic bound (milliseconds each), so thousands fit in CI's budget; the simulated
//! search's bounded work has its own cases in `tests/extremes.rs`.
//!
//! The mutants are a pure function of a fixed seed, so a failure reproduces: the message names the
//! base file, the mutant's index and the mutation, and prints the mutated text.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use tco_sim::input::{InputError, SourceFile};
use tco_sim::scenario::Scenario;

/// Numbers that sit at or past the edge of what an input can mean.
const EXTREMES: &[&str] = &[
    "0",
    "-1",
    "-0.5",
    "1e308",
    "-1e308",
    "1e-300",
    "1e-6",
    "0.001",
    "1e7",
    "2e9",
    "4294967296",
    "18446744073709551616",
    "3",
    "20",
    "0.5",
    "nan",
    "inf",
    "-inf",
    "1",
    "100000",
    "-3",
];

/// One mutation of a text file.
#[derive(Debug, Clone)]
enum Mutation {
    /// The n-th number in the file becomes an extreme value.
    Number { index: usize, value: &'static str },
    /// Line n is deleted.
    DropLine(usize),
    /// Line n appears twice.
    DoubleLine(usize),
    /// Lines a and b trade places.
    SwapLines(usize, usize),
    /// The text ends after this many bytes.
    Truncate(usize),
    /// A quoted string becomes empty.
    EmptyString(usize),
    /// Two numbers at once become extremes.
    TwoNumbers(usize, &'static str, usize, &'static str),
}

/// Byte ranges of the numeric literals in a TOML/CSV/JSON text (outside quoted strings and
/// comments), so a mutation hits values, not keys.
fn numbers(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut in_str = false;
    let mut in_comment = false;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            in_comment = false;
            in_str = false;
            i += 1;
            continue;
        }
        if in_comment {
            i += 1;
            continue;
        }
        if c == b'"' {
            in_str = !in_str;
            i += 1;
            continue;
        }
        if !in_str && c == b'#' {
            in_comment = true;
            i += 1;
            continue;
        }
        let starts_number = !in_str
            && (c.is_ascii_digit() || (c == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit)))
            && (i == 0
                || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'.'));
        if starts_number {
            let start = i;
            i += 1;
            while i < b.len()
                && (b[i].is_ascii_digit()
                    || matches!(b[i], b'.' | b'e' | b'E' | b'_' | b'-' | b'+'))
            {
                i += 1;
            }
            // A date or a key such as 2023-11-16 or 8x-h100 is not a number to mutate.
            if i < b.len() && (b[i].is_ascii_alphabetic() || b[i] == b':') {
                continue;
            }
            if text[start..i].replace('_', "").parse::<f64>().is_err() {
                continue;
            }
            out.push((start, i));
            continue;
        }
        i += 1;
    }
    out
}

fn strings(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (line_start, line) in line_offsets(text) {
        if line.trim_start().starts_with('#') {
            continue;
        }
        let mut quote = None;
        for (j, ch) in line.char_indices() {
            if ch == '"' {
                match quote {
                    None => quote = Some(j),
                    Some(s) => {
                        out.push((line_start + s + 1, line_start + j));
                        quote = None;
                    }
                }
            }
        }
    }
    out
}

fn line_offsets(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        out.push((start, line));
        start += line.len();
    }
    out
}

fn pick(rng: &mut Xoshiro256PlusPlus, n: usize) -> usize {
    rng.random_range(0..n.max(1))
}

fn mutation(rng: &mut Xoshiro256PlusPlus, text: &str) -> Mutation {
    let nums = numbers(text).len();
    let lines = text.lines().count();
    let strs = strings(text).len();
    let ext = |rng: &mut Xoshiro256PlusPlus| EXTREMES[pick(rng, EXTREMES.len())];
    match rng.random_range(0..100u32) {
        0..=54 if nums > 0 => Mutation::Number {
            index: pick(rng, nums),
            value: ext(rng),
        },
        55..=64 if nums > 1 => {
            Mutation::TwoNumbers(pick(rng, nums), ext(rng), pick(rng, nums), ext(rng))
        }
        65..=74 => Mutation::DropLine(pick(rng, lines)),
        75..=81 => Mutation::DoubleLine(pick(rng, lines)),
        82..=87 => Mutation::SwapLines(pick(rng, lines), pick(rng, lines)),
        88..=93 if strs > 0 => Mutation::EmptyString(pick(rng, strs)),
        _ => Mutation::Truncate(pick(rng, text.len())),
    }
}

fn apply(text: &str, m: &Mutation) -> String {
    let replace_number = |t: &str, index: usize, value: &str| {
        let nums = numbers(t);
        let (a, b) = nums[index.min(nums.len() - 1)];
        format!("{}{value}{}", &t[..a], &t[b..])
    };
    match m {
        Mutation::Number { index, value } => replace_number(text, *index, value),
        Mutation::TwoNumbers(i, v, j, w) => {
            let once = replace_number(text, *i, v);
            if numbers(&once).is_empty() {
                once
            } else {
                replace_number(&once, *j, w)
            }
        }
        Mutation::DropLine(n) => text
            .split_inclusive('\n')
            .enumerate()
            .filter(|(i, _)| i != n)
            .map(|(_, l)| l)
            .collect(),
        Mutation::DoubleLine(n) => text
            .split_inclusive('\n')
            .enumerate()
            .flat_map(|(i, l)| if i == *n { vec![l, l] } else { vec![l] })
            .collect(),
        Mutation::SwapLines(a, b) => {
            let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
            if *a < lines.len() && *b < lines.len() {
                lines.swap(*a, *b);
            }
            lines.concat()
        }
        Mutation::Truncate(n) => {
            let mut n = (*n).min(text.len());
            while !text.is_char_boundary(n) {
                n -= 1;
            }
            text[..n].to_string()
        }
        Mutation::EmptyString(i) => {
            let s = strings(text);
            let (a, b) = s[(*i).min(s.len() - 1)];
            format!("{}{}", &text[..a], &text[b..])
        }
    }
}

/// The mutants of one base text: `count` of them from `seed`.
fn mutants(base: &str, seed: u64, count: usize) -> Vec<(Mutation, String)> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let m = mutation(&mut rng, base);
            let text = apply(base, &m);
            (m, text)
        })
        .collect()
}

/// How one mutant ended.
#[derive(Debug, Default)]
struct Tally {
    tried: usize,
    ok: usize,
    input_errors: usize,
}

/// Why a mutant failed the contract.
fn failure(file: &str, i: usize, m: &Mutation, text: &str, what: String) -> String {
    format!("{file} mutant {i} ({m:?}): {what}\n--- mutated text ---\n{text}\n---")
}

/// A successful run's JSON and CSV carry no non-finite number: serde_json writes those as
/// `null`, so the check walks the results themselves (every f64 they hold) and the CSV text.
fn non_finite_in_outputs(r: &tco_sim::results::RunResults) -> Option<String> {
    let csv = tco_sim::report::data::csv(r);
    for (n, line) in csv.lines().enumerate() {
        for cell in line.split(',') {
            let c = cell.trim().to_ascii_lowercase();
            if matches!(
                c.as_str(),
                "inf" | "-inf" | "nan" | "infinity" | "-infinity"
            ) {
                return Some(format!("results.csv line {}: {line}", n + 1));
            }
        }
    }
    tco_sim::output::finite::check(r).err()
}

fn is_input_error(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<InputError>())
}

fn scenario_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir("scenarios")
        .expect("scenarios/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    v
}

/// Mutants per shipped scenario: 6 scenarios × 400 = 2,400 scenario mutants.
const SCENARIO_MUTANTS: usize = 400;

#[test]
fn scenario_mutants_end_in_a_run_or_a_located_error() {
    let mut failures = Vec::new();
    let mut tally = Tally::default();
    for (k, path) in scenario_files().iter().enumerate() {
        let base = std::fs::read_to_string(path).expect("read scenario");
        let name = path.display().to_string();
        for (i, (m, text)) in mutants(&base, 0x5eed_0000 + k as u64, SCENARIO_MUTANTS)
            .into_iter()
            .enumerate()
        {
            tally.tried += 1;
            if std::env::var_os("FUZZ_TRACE").is_some() {
                eprintln!("{name} mutant {i}: {m:?}");
            }
            let src = SourceFile {
                name: name.clone(),
                path: Some(path.clone()),
                text: text.clone(),
            };
            let outcome = catch_unwind(AssertUnwindSafe(
                || -> Result<Option<String>, anyhow::Error> {
                    let s = Scenario::from_source(&src)?;
                    let r =
                        tco_sim::results::plan(&s, tco_sim::results::Method::Analytic, &|_, _| {})?;
                    Ok(non_finite_in_outputs(&r))
                },
            ));
            match outcome {
                Err(_) => failures.push(failure(&name, i, &m, &text, "panicked".into())),
                Ok(Ok(None)) => tally.ok += 1,
                Ok(Ok(Some(bad))) => failures.push(failure(
                    &name,
                    i,
                    &m,
                    &text,
                    format!("non-finite output: {bad}"),
                )),
                Ok(Err(e)) if is_input_error(&e) => {
                    tally.input_errors += 1;
                    let msg = format!("{e:#}");
                    if !msg.contains(&name)
                        && !msg.contains("embedded:")
                        && !msg.contains(".csv")
                        && !msg.contains(".jsonl")
                    {
                        failures.push(failure(
                            &name,
                            i,
                            &m,
                            &text,
                            format!("error names no file: {msg}"),
                        ));
                    }
                }
                Ok(Err(e)) => failures.push(failure(
                    &name,
                    i,
                    &m,
                    &text,
                    format!("internal error (exit 1): {e:#}"),
                )),
            }
        }
    }
    eprintln!(
        "scenario mutants: {} tried, {} ran, {} input errors",
        tally.tried, tally.ok, tally.input_errors
    );
    assert!(
        tally.ok > tally.tried / 10,
        "too few mutants ran: {tally:?}"
    );
    assert!(
        tally.input_errors > tally.tried / 10,
        "too few mutants were rejected: {tally:?}"
    );
    assert!(
        failures.is_empty(),
        "{} of {} scenario mutants broke the contract; the first:\n{}",
        failures.len(),
        tally.tried,
        failures[0]
    );
}

#[test]
fn profile_mutants_end_in_a_profile_or_a_located_error() {
    let mut failures = Vec::new();
    let mut tally = Tally::default();
    let mut files: Vec<PathBuf> = std::fs::read_dir("hardware-profiles")
        .expect("hardware-profiles/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    for (k, path) in files.iter().enumerate() {
        let base = std::fs::read_to_string(path).expect("read profile");
        let name = path.display().to_string();
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .map(str::to_string);
        for (i, (m, text)) in mutants(&base, 0xc0de_0000 + k as u64, 150)
            .into_iter()
            .enumerate()
        {
            tally.tried += 1;
            let src = SourceFile {
                name: name.clone(),
                path: Some(path.clone()),
                text: text.clone(),
            };
            match catch_unwind(AssertUnwindSafe(|| {
                tco_sim::hardware::Profile::from_source(&src, stem.as_deref())
            })) {
                Err(_) => failures.push(failure(&name, i, &m, &text, "panicked".into())),
                Ok(Ok(p)) => {
                    tally.ok += 1;
                    if let Some((field, c)) = p
                        .cited_numbers()
                        .into_iter()
                        .find(|(_, c)| !c.value.is_finite())
                    {
                        failures.push(failure(
                            &name,
                            i,
                            &m,
                            &text,
                            format!("accepted a non-finite {field} = {}", c.value),
                        ));
                    }
                }
                Ok(Err(e)) => {
                    tally.input_errors += 1;
                    if e.file.is_none() {
                        failures.push(failure(
                            &name,
                            i,
                            &m,
                            &text,
                            format!("error names no file: {e}"),
                        ));
                    }
                }
            }
        }
    }
    eprintln!(
        "profile mutants: {} tried, {} valid, {} input errors",
        tally.tried, tally.ok, tally.input_errors
    );
    assert!(
        failures.is_empty(),
        "{} of {} profile mutants broke the contract; the first:\n{}",
        failures.len(),
        tally.tried,
        failures[0]
    );
}

#[test]
fn trace_mutants_end_in_a_trace_or_a_located_error() {
    use tco_sim::traffic::trace::{Trace, TraceFormat};
    let mut failures = Vec::new();
    let mut tally = Tally::default();
    // The first 60 rows of the shipped Azure trace, and a Mooncake JSONL written from them.
    let azure: String =
        std::fs::read_to_string("traces/azure-llm-2023/AzureLLMInferenceTrace_conv.csv")
            .expect("shipped trace")
            .lines()
            .take(60)
            .map(|l| format!("{l}\n"))
            .collect();
    let mooncake: String = (0..40)
        .map(|i| {
            format!(
                "{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": {}, \"hash_ids\": [{}, {}]}}\n",
                i * 250,
                300 + 17 * i,
                40 + 3 * i,
                i,
                i + 1
            )
        })
        .collect();
    for (k, (label, base, format)) in [
        ("azure.csv", azure, TraceFormat::Azure),
        ("mooncake.jsonl", mooncake, TraceFormat::Mooncake),
    ]
    .into_iter()
    .enumerate()
    {
        for (i, (m, text)) in mutants(&base, 0x7ace_0000 + k as u64, 600)
            .into_iter()
            .enumerate()
        {
            tally.tried += 1;
            let src = SourceFile::from_text(label, text.clone());
            match catch_unwind(AssertUnwindSafe(|| {
                Trace::parse(&src, format.clone()).map(|t| (t.span_s(), t.stats().ok()))
            })) {
                Err(_) => failures.push(failure(label, i, &m, &text, "panicked".into())),
                Ok(Ok((span, _))) => {
                    tally.ok += 1;
                    if !span.is_finite() {
                        failures.push(failure(label, i, &m, &text, format!("span {span}")));
                    }
                }
                Ok(Err(e)) => {
                    tally.input_errors += 1;
                    if e.file.is_none() {
                        failures.push(failure(
                            label,
                            i,
                            &m,
                            &text,
                            format!("error names no file: {e}"),
                        ));
                    }
                }
            }
        }
    }
    eprintln!(
        "trace mutants: {} tried, {} parsed, {} input errors",
        tally.tried, tally.ok, tally.input_errors
    );
    assert!(
        failures.is_empty(),
        "{} of {} trace mutants broke the contract; the first:\n{}",
        failures.len(),
        tally.tried,
        failures[0]
    );
}

#[test]
fn rate_series_mutants_end_in_a_series_or_a_located_error() {
    use tco_sim::traffic::series::{RateSeries, SeriesFormat};
    let dir = tempfile::tempdir().expect("temp dir");
    let base: String = (0..36)
        .map(|i| {
            format!(
                "{},{:.3},{:.3},Gamma,{:.3},{:.3}\n",
                i * 600,
                20.0 + 5.0 * ((i % 12) as f64),
                1.0 + 0.1 * ((i % 5) as f64),
                1.2,
                0.04
            )
        })
        .collect();
    let mut failures = Vec::new();
    let mut tally = Tally::default();
    for (i, (m, text)) in mutants(&base, 0x5e7e_0000, 400).into_iter().enumerate() {
        tally.tried += 1;
        let path: &Path = &dir.path().join(format!("chunk-{i}-trace.csv"));
        std::fs::write(path, &text).expect("write mutant");
        match catch_unwind(AssertUnwindSafe(|| {
            RateSeries::read(path, SeriesFormat::ServeGen, true).map(|s| s.integrated(s.period_s()))
        })) {
            Err(_) => failures.push(failure("servegen.csv", i, &m, &text, "panicked".into())),
            Ok(Ok(total)) => {
                tally.ok += 1;
                if !total.is_finite() {
                    failures.push(failure(
                        "servegen.csv",
                        i,
                        &m,
                        &text,
                        format!("total requests {total}"),
                    ));
                }
            }
            Ok(Err(e)) => {
                tally.input_errors += 1;
                if e.file.is_none() {
                    failures.push(failure(
                        "servegen.csv",
                        i,
                        &m,
                        &text,
                        format!("error names no file: {e}"),
                    ));
                }
            }
        }
    }
    eprintln!(
        "rate-series mutants: {} tried, {} read, {} input errors",
        tally.tried, tally.ok, tally.input_errors
    );
    assert!(
        failures.is_empty(),
        "{} of {} rate-series mutants broke the contract; the first:\n{}",
        failures.len(),
        tally.tried,
        failures[0]
    );
}

#[test]
fn mutation_helpers_find_values_not_keys() {
    let t = "name = \"a-1b\"\npeak_rps = 400 # 2023-01-01\ndate = 2023-11-16\nx = [1.5e3, -2]\n";
    let n: Vec<&str> = numbers(t).iter().map(|&(a, b)| &t[a..b]).collect();
    assert_eq!(n, vec!["400", "1.5e3", "-2"]);
    assert_eq!(
        apply(
            t,
            &Mutation::Number {
                index: 0,
                value: "1e308"
            }
        ),
        t.replace("400", "1e308")
    );
    assert_eq!(apply(t, &Mutation::EmptyString(0)), t.replace("a-1b", ""));
    assert_eq!(mutants(t, 7, 50).len(), 50);
    // Seeded: the same mutants every time.
    let a: Vec<String> = mutants(t, 7, 20).into_iter().map(|(_, s)| s).collect();
    let b: Vec<String> = mutants(t, 7, 20).into_iter().map(|(_, s)| s).collect();
    assert_eq!(a, b);
}
