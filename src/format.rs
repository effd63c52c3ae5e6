//! One formatter per kind of number: money, counts, durations, rates, percentages, hours of
//! daily use, multiples, bytes and FLOP/s, each printed one way in the terminal tables, the
//! charts, the PDF and the CSV (the model is hyperfine's `src/output/format.rs`).
//!
//! Foundation stage: plain functions from numbers to text, used by `report` and by the
//! descriptions earlier stages write.
//!
//! Conventions, in every function here:
//! - thousands are grouped with commas ("1,234,567") in amounts meant for people; [`fixed`]
//!   (machine-readable files) and [`count`] (fleet sizes) are the exceptions;
//! - a value that rounds to zero prints without a sign ("0", not "-0");
//! - units follow the number after a space ("12 %", "1,250 ms"), except the currency sign,
//!   which leads ("-$1,234"), and the multiplication sign ("2.5×");
//! - where the number of decimals depends on the size, it is chosen after rounding, so 99.996
//!   prints "100" rather than "100.0";
//! - a value that is not finite prints as [`MISSING`].

/// What a table cell or label shows for a value that is not there or not finite.
pub const MISSING: &str = "–";

/// `x` with `decimals` decimals and comma-grouped thousands: `1234567.891` → "1,234,567.89".
pub fn grouped(x: f64, decimals: usize) -> String {
    if !x.is_finite() {
        return MISSING.into();
    }
    let s = format!("{:.*}", decimals, x.abs());
    let (int, frac) = s.split_once('.').unwrap_or((&s, ""));
    let mut out = String::with_capacity(s.len() + int.len() / 3 + 1);
    if x < 0.0 && s.bytes().any(|b| b.is_ascii_digit() && b != b'0') {
        out.push('-');
    }
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    out
}

/// A count of things — units in a fleet, instances, replications: plain digits, "1191".
///
/// Counts are not grouped: the capacity chart has always listed fleet sizes as
/// "units: 794 1191 1787", the shipped charts must stay byte-identical, and a count should
/// read the same in the terminal, the PDF and the chart. Change it here, and only here, to
/// group them.
pub fn count(n: impl Into<u64>) -> String {
    n.into().to_string()
}

/// Machine-readable decimals for CSV: a fixed number of decimals, '.' as the decimal point, no
/// grouping (a comma would split the field).
pub fn fixed(x: f64, decimals: usize) -> String {
    format!("{x:.decimals$}")
}

/// The shortest of `x` at up to three decimals, with no trailing zeros: 0.2 → "0.2",
/// 99.9 → "99.9", 2.0 → "2". Ungrouped, for values inside labels such as "p99 ≤ 200 ms".
pub fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

/// A number as a table of inputs shows it: grouped thousands, no trailing zeros (up to six
/// decimals), and a power of ten for very large or small magnitudes: "126,700", "0.081",
/// "8.03 × 10⁹", "2 × 10⁻⁵".
pub fn plain(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return grouped(v, 0);
    }
    let a = v.abs();
    if !(1e-4..1e9).contains(&a) {
        let exp = a.log10().floor() as i32;
        let mant = v / 10f64.powi(exp);
        return format!("{} × 10{}", trim(mant), superscript(exp));
    }
    let s = grouped(v, 6);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

fn superscript(n: i32) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    n.to_string()
        .chars()
        .map(|c| match c.to_digit(10) {
            Some(d) => DIGITS[d as usize],
            None => '⁻',
        })
        .collect()
}

/// Whether `x` printed with `decimals` decimals stays below `limit` in magnitude: the test
/// that picks a size class after rounding, with the rounding of the printing itself.
fn stays_below(x: f64, decimals: usize, limit: f64) -> bool {
    format!("{:.*}", decimals, x.abs())
        .parse::<f64>()
        .is_ok_and(|r| r < limit)
}

/// Decimals for about three significant figures: 2 below 10, 1 below 100, 0 above.
fn decimals_by_size(x: f64) -> usize {
    if stays_below(x, 2, 10.0) {
        2
    } else if stays_below(x, 1, 100.0) {
        1
    } else {
        0
    }
}

/// `number` followed by `unit` after a space, or [`MISSING`] alone when there is no number.
fn with_unit(number: String, unit: &str) -> String {
    if number == MISSING {
        number
    } else {
        format!("{number} {unit}")
    }
}

// ---------------------------------------------------------------------------------------------
// Money (US dollars)

/// Put the currency sign after the minus: "-1,234" → "-$1,234".
fn dollars(number: String, suffix: &str) -> String {
    if number == MISSING {
        return number;
    }
    match number.strip_prefix('-') {
        Some(rest) => format!("-${rest}{suffix}"),
        None => format!("${number}{suffix}"),
    }
}

/// Whole dollars: "$2,411,036", "-$1,234", "$0".
pub fn usd(x: f64) -> String {
    dollars(grouped(x, 0), "")
}

/// Dollars and cents: "$2,731.11". Cents are rounded half away from zero.
pub fn usd_cents(x: f64) -> String {
    if !x.is_finite() {
        return MISSING.into();
    }
    let cents = (x.abs() * 100.0).round();
    let sign = if x < 0.0 && cents > 0.0 { "-" } else { "" };
    format!(
        "{sign}${}.{:02}",
        grouped((cents / 100.0).trunc(), 0),
        (cents % 100.0) as u64
    )
}

/// Dollars in a sentence or title: whole dollars below ten million ("$2,411,036"), millions
/// with one decimal above ("$42.3M"), where the last dollars are noise.
pub fn usd_or_millions(x: f64) -> String {
    if x.abs() < 1e7 {
        usd(x)
    } else {
        dollars(grouped(x / 1e6, 1), "M")
    }
}

/// A short label for a bar, about three figures: "$1.03M", "$26k", "$9.6k", "$950".
pub fn usd_compact(x: f64) -> String {
    if stays_below(x, 0, 1e3) {
        usd(x)
    } else if stays_below(x / 1e3, 1, 10.0) {
        dollars(grouped(x / 1e3, 1), "k")
    } else if stays_below(x / 1e3, 0, 1e3) {
        dollars(grouped(x / 1e3, 0), "k")
    } else {
        dollars(grouped(x / 1e6, 2), "M")
    }
}

/// Decimals needed to print multiples of `step` exactly (at most 3).
fn decimals_for(step: f64) -> usize {
    (0..=3)
        .find(|&d| {
            let scaled = step * 10f64.powi(d as i32);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.abs().max(1.0)
        })
        .unwrap_or(3)
}

/// Dollars on an axis whose ticks are `step` apart and whose top is `max`: "$0", "$250k",
/// "$1.5M". The unit is chosen once per axis, so the ticks line up.
pub fn usd_tick(v: f64, step: f64, max: f64) -> String {
    let (unit, suffix) = if max >= 1e6 {
        (1e6, "M")
    } else if max >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    if v.abs() < step * 1e-9 {
        return "$0".into();
    }
    dollars(grouped(v / unit, decimals_for(step / unit)), suffix)
}

/// A plain number on an axis whose ticks are `step` apart: as many decimals as the step needs.
pub fn number_tick(v: f64, step: f64) -> String {
    grouped(v, decimals_for(step))
}

// ---------------------------------------------------------------------------------------------
// Durations, rates, shares

/// A duration in milliseconds with about three figures: "1,250 ms", "12.5 ms", "0.85 ms".
/// Latencies stay in milliseconds however long, so a table of them reads down one unit.
pub fn ms(seconds: f64) -> String {
    let m = seconds * 1e3;
    with_unit(grouped(m, decimals_by_size(m)), "ms")
}

/// A duration in the unit a reader would say it in: milliseconds below a second ("200 ms",
/// "12.5 ms"), seconds from a second up ("60 s", "2.5 s", "1,250 s"), with no trailing zeros.
/// For bounds and figures in text: "p99 ≤ 60 s", "TTFT ≤ 2 s, TPOT ≤ 100 ms".
pub fn duration(seconds: f64) -> String {
    if !seconds.is_finite() {
        return MISSING.into();
    }
    let short = |x: f64| {
        let s = grouped(x, decimals_by_size(x));
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if stays_below(seconds, decimals_by_size(seconds), 1.0) {
        format!("{} ms", short(seconds * 1e3))
    } else {
        format!("{} s", short(seconds))
    }
}

/// A duration with its 95 % confidence half-width in the unit of the value: "59.8 s ± 3.9 s",
/// "63 ms ± 2 ms"; "63 ms (no interval)" when none could be computed (a zero half-width comes
/// from a single replication, such as one replay of a trace, and is not an interval).
pub fn duration_ci(seconds: f64, half_width: Option<f64>) -> String {
    match half_width {
        Some(h) if h > 0.0 && h.is_finite() => {
            if stays_below(seconds, decimals_by_size(seconds), 1.0) {
                format!("{} ± {}", ms(seconds), ms(h))
            } else {
                let d = decimals_by_size(seconds).min(2);
                format!("{} s ± {} s", grouped(seconds, d), grouped(h, d))
            }
        }
        _ => format!("{} (no interval)", duration(seconds)),
    }
}

/// An input's value with the unit it is declared in — the one way the assumptions table, the
/// method's list of estimates and the tornado's ranges (PDF and terminal) print a cited or
/// estimated figure. The precision rule:
///
/// - **four significant figures**, whole-number digits never dropped, trailing zeros trimmed:
///   0.123456 → "0.1235", 1.35 → "1.35", 126,700 → "126,700", 373,710.3 USD → "373,710 USD".
///   Four figures keep 1 part in 1,000 of what a source quotes (its own precision is 2–4
///   figures), so the rounding (≤ 0.05 %) is far below any flip point the report prints;
/// - **money below $100 keeps its cents** (per-hour and per-kWh prices are quoted to the cent
///   or finer): 28.106467 USD/h → "28.11 USD/h", 1.5 → "1.50", 0.0464 → "0.0464";
/// - units with SI prefixes are scaled first: (2.56e11, "B") → "256 GB", (3.35e12, "B/s") →
///   "3.35 TB/s", (9.894e14, "FLOP/s") → "989.4 TFLOP/s"; seconds read as [`duration`] does,
///   at four figures: (0.0005, "s") → "0.5 ms", (60, "s") → "60 s";
/// - magnitudes below 10⁻⁴ or from 10⁹ up (without an SI unit) take a power of ten:
///   "2 × 10⁻⁵".
pub fn quantity(value: f64, unit: &str) -> String {
    let (number, unit) = quantity_parts(value, unit);
    if unit.is_empty() || number == MISSING {
        number
    } else {
        format!("{number} {unit}")
    }
}

/// A range of an input's values: (0.08, 0.2, "USD/kWh") → "0.08 – 0.20 USD/kWh"; with a
/// scaled unit each end carries its own: (8e10, 1.6e11, "B") → "80 GB – 160 GB".
pub fn quantity_range(low: f64, high: f64, unit: &str) -> String {
    let (lo, lo_unit) = quantity_parts(low, unit);
    let (hi, hi_unit) = quantity_parts(high, unit);
    if lo_unit == hi_unit && lo_unit == unit {
        with_unit(format!("{lo} – {hi}"), unit)
            .trim_end()
            .to_string()
    } else {
        format!("{} – {}", quantity(low, unit), quantity(high, unit))
    }
}

/// The number and the (possibly prefixed) unit [`quantity`] prints.
fn quantity_parts(value: f64, unit: &str) -> (String, String) {
    if !value.is_finite() {
        return (MISSING.into(), unit.into());
    }
    let si_scaled = |unit: &str| {
        const PREFIXES: [(f64, &str); 5] =
            [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
        let a = value.abs();
        for (scale, prefix) in PREFIXES {
            if a / scale >= 1.0 - 5e-5 {
                return (figures4(value / scale, 0), format!("{prefix}{unit}"));
            }
        }
        (figures4(value, 0), unit.to_string())
    };
    match unit {
        "B" | "B/s" | "FLOP/s" => si_scaled(unit),
        "s" if value != 0.0 && value.abs() < 1.0 - 5e-5 => (figures4(value * 1e3, 0), "ms".into()),
        u if u.starts_with("USD") && value.abs() < 100.0 - 5e-3 => {
            (figures4(value, 2), u.to_string())
        }
        u => (figures4(value, 0), u.to_string()),
    }
}

/// `x` to four significant figures with at least `min_decimals` decimals, grouped, trailing
/// zeros beyond those trimmed; a power of ten below 10⁻⁴ and from 10⁹ up.
fn figures4(x: f64, min_decimals: usize) -> String {
    if x == 0.0 {
        return grouped(0.0, min_decimals);
    }
    let a = x.abs();
    if !(1e-4..1e9).contains(&a) {
        let exp = a.log10().floor() as i32;
        let mant = x / 10f64.powi(exp);
        let m = format!("{mant:.3}");
        let m = m.trim_end_matches('0').trim_end_matches('.');
        return format!("{m} × 10{}", superscript(exp));
    }
    // Decimals for four figures, decided after rounding (9.9996 has the figures of 10.00).
    let mut d = (3 - a.log10().floor() as i32).max(0) as usize;
    if d > 0 && !stays_below(a, d, 10f64.powi(4 - d as i32)) {
        d -= 1;
    }
    let s = grouped(x, d.max(min_decimals));
    if !s.contains('.') {
        return s;
    }
    let (int, frac) = s.split_once('.').unwrap_or((&s, ""));
    let mut frac = frac.to_string();
    while frac.len() > min_decimals && frac.ends_with('0') {
        frac.pop();
    }
    if frac.is_empty() {
        int.to_string()
    } else {
        format!("{int}.{frac}")
    }
}

/// A request rate: "1,142 req/s", "12.5 req/s", "0.35 req/s", "0 req/s".
pub fn rps(v: f64) -> String {
    with_unit(rate(v), "req/s")
}

/// A rate's number with about three figures, grouped: "1,142", "12.5", "0.35", "0".
pub fn rate(v: f64) -> String {
    let d = if v == 0.0 { 0 } else { decimals_by_size(v) };
    grouped(v, d)
}

/// About three significant figures at any magnitude, grouped: "1,235", "12.3", "0.00412",
/// "0" (a power of ten below 10⁻⁴). For physical quantities that span decades (joules per
/// request, requests per watt).
pub fn figures3(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return grouped(x, 0);
    }
    if x.abs() < 1e-4 {
        return plain(x);
    }
    let magnitude = x.abs().log10().floor() as i32;
    grouped(x, (2 - magnitude).max(0) as usize)
}

/// A fraction as a percentage with `decimals` decimals: 0.123 → "12 %" (0 decimals).
pub fn percent(fraction: f64, decimals: usize) -> String {
    with_unit(grouped(fraction * 100.0, decimals), "%")
}

/// A range of fractions as percentages: (0.62, 0.81) → "62–81 %".
pub fn percent_range(lo: f64, hi: f64, decimals: usize) -> String {
    format!(
        "{}–{}",
        grouped(lo * 100.0, decimals),
        percent(hi, decimals)
    )
}

/// A change as a signed percentage: 0.0123 → "+1.2 %", -0.5 → "-50.0 %" (1 decimal).
pub fn percent_change(fraction: f64, decimals: usize) -> String {
    let s = grouped(fraction * 100.0, decimals);
    if s.starts_with('-') || s == MISSING {
        with_unit(s, "%")
    } else {
        format!("+{s} %")
    }
}

/// A probability as a percentage, whole unless rounding would say "0 %" of something that
/// happens or "100 %" of something that does not always: 0.742 → "74 %", 0.995 → "99.5 %".
pub fn share(p: f64) -> String {
    let whole = percent(p, 0);
    if (whole == "0 %" && p > 0.0) || (whole == "100 %" && p < 1.0) {
        percent(p, 1)
    } else {
        whole
    }
}

/// A relative change, with as many decimals as it takes not to read as no change:
/// 0.168 → "+16.8 %", 0.00004 → "+0.004 %"; a change below one part in a million is "at its
/// base value".
pub fn change_text(fraction: f64) -> String {
    if fraction.abs() < 1e-6 {
        return "at its base value".into();
    }
    let mut decimals = 1;
    while decimals < 4 && (fraction * 100.0).abs() < 0.5 * 10f64.powi(-(decimals as i32)) {
        decimals += 1;
    }
    percent_change(fraction, decimals)
}

/// A percentage with at most `decimals` decimals and no trailing zeros: 0.07 → "7 %",
/// 0.075 → "7.5 %".
pub fn percent_short(fraction: f64, decimals: usize) -> String {
    let s = grouped(fraction * 100.0, decimals);
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    with_unit(s.to_string(), "%")
}

/// A percentile's name: "p99", "p99.9".
pub fn percentile(p: f64) -> String {
    if (p - p.round()).abs() < 1e-9 {
        format!("p{}", p.round() as i64)
    } else {
        format!("p{p}")
    }
}

/// Hours of use per day, for break-even: "4.9 h/day".
pub fn hours_per_day(h: f64) -> String {
    with_unit(grouped(h, 1), "h/day")
}

/// A multiple: "2.5×".
pub fn times(x: f64) -> String {
    let s = grouped(x, 1);
    if s == MISSING { s } else { format!("{s}×") }
}

// ---------------------------------------------------------------------------------------------
// Hardware units (SI prefixes: vendors quote GB and TFLOP/s in powers of ten)

/// `value` scaled to the largest SI prefix that keeps it at least 1, with about three figures.
fn si(value: f64, unit: &str) -> String {
    const PREFIXES: [(f64, &str); 5] =
        [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    let a = value.abs();
    for (scale, prefix) in PREFIXES {
        // Compare after rounding, so 999.96 GB prints "1.00 TB".
        if !stays_below(a / scale, decimals_by_size(a / scale), 1.0) {
            let x = value / scale;
            return format!("{} {prefix}{unit}", grouped(x, decimals_by_size(x)));
        }
    }
    format!("{} {unit}", grouped(value, decimals_by_size(value)))
}

/// Bytes with an SI prefix: 80e9 → "80.0 GB", 3.35e12 → "3.35 TB".
pub fn bytes(b: f64) -> String {
    si(b, "B")
}

/// Bytes per second with an SI prefix: 3.35e12 → "3.35 TB/s".
pub fn bytes_per_s(b: f64) -> String {
    si(b, "B/s")
}

/// Floating-point operations per second with an SI prefix: 989.4e12 → "989 TFLOP/s".
pub fn flops(f: f64) -> String {
    si(f, "FLOP/s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_and_changes_never_round_to_a_different_story() {
        assert_eq!(share(0.995), "99.5 %");
        assert_eq!(share(0.742), "74 %");
        assert_eq!(share(1.0), "100 %");
        assert_eq!(change_text(0.168), "+16.8 %");
        assert_eq!(change_text(-0.2), "-20.0 %");
        assert_eq!(change_text(0.00004), "+0.004 %");
        assert_eq!(change_text(1e-9), "at its base value");
    }

    #[test]
    fn durations_in_the_unit_a_reader_says() {
        assert_eq!(duration(60.0), "60 s");
        assert_eq!(duration(0.2), "200 ms");
        assert_eq!(duration(2.5), "2.5 s");
        assert_eq!(duration(0.0125), "12.5 ms");
        assert_eq!(duration(0.9999), "1 s");
        assert_eq!(duration(1250.0), "1,250 s");
        assert_eq!(duration(f64::INFINITY), MISSING);
        assert_eq!(duration_ci(59.8, Some(3.9)), "59.8 s ± 3.9 s");
        assert_eq!(duration_ci(0.063, Some(0.002)), "63.0 ms ± 2.00 ms");
        assert_eq!(duration_ci(0.063, Some(0.0)), "63 ms (no interval)");
        assert_eq!(quantity(2.56e11, "B"), "256 GB");
        assert_eq!(quantity(3.35e12, "B/s"), "3.35 TB/s");
        assert_eq!(quantity(0.12, "USD/kWh"), "0.12 USD/kWh");
    }

    #[test]
    fn input_values_keep_four_figures_and_cents() {
        // (value, unit, printed): the rule of `quantity`, case by case.
        let cases: &[(f64, &str, &str)] = &[
            // Money below $100 to the cent, finer when the source is finer.
            (28.106467, "USD/h", "28.11 USD/h"),
            (1.5, "USD/h", "1.50 USD/h"),
            (0.12, "USD/kWh", "0.12 USD/kWh"),
            (0.0464, "USD/h", "0.0464 USD/h"),
            (0.081234, "USD/kWh", "0.08123 USD/kWh"),
            (99.999, "USD", "100 USD"),
            // From $100 up: four figures, whole-number digits kept.
            (123.456, "USD", "123.5 USD"),
            (373_710.300308, "USD", "373,710 USD"),
            (2_500.0, "USD/year", "2,500 USD/year"),
            // Other units: four figures, trailing zeros trimmed.
            (0.123456, "fraction", "0.1235 fraction"),
            (0.07, "fraction/year", "0.07 fraction/year"),
            (1.35, "", "1.35"),
            (8.0, "GPUs", "8 GPUs"),
            (126_700.0, "", "126,700"),
            (9.99996, "", "10"),
            (2e-5, "", "2 × 10⁻⁵"),
            (8.034e9, "", "8.034 × 10⁹"),
            // SI-prefixed units and durations.
            (2.56e11, "B", "256 GB"),
            (8e10, "B", "80 GB"),
            (3.35e12, "B/s", "3.35 TB/s"),
            (9.894e14, "FLOP/s", "989.4 TFLOP/s"),
            (999.96e9, "B", "1 TB"),
            (0.0005, "s", "0.5 ms"),
            (0.0123456, "s", "12.35 ms"),
            (60.0, "s", "60 s"),
            (0.0, "USD/h", "0.00 USD/h"),
            (f64::NAN, "USD", MISSING),
        ];
        for (v, unit, want) in cases {
            assert_eq!(quantity(*v, unit), *want, "{v} {unit}");
        }
        assert_eq!(quantity_range(0.08, 0.2, "USD/kWh"), "0.08 – 0.20 USD/kWh");
        assert_eq!(quantity_range(0.25, 0.5, ""), "0.25 – 0.5");
        assert_eq!(quantity_range(8e10, 1.6e11, "B"), "80 GB – 160 GB");
    }

    #[test]
    fn three_figures_at_any_magnitude() {
        assert_eq!(figures3(1234.6), "1,235");
        assert_eq!(figures3(12.34), "12.3");
        assert_eq!(figures3(0.004123), "0.00412");
        assert_eq!(figures3(-0.5), "-0.500");
        assert_eq!(figures3(0.0), "0");
        assert_eq!(figures3(f64::NAN), MISSING);
        assert_eq!(figures3(2e-300), "2 × 10⁻³⁰⁰");
    }

    #[test]
    fn grouping_keeps_signs_and_carries() {
        assert_eq!(grouped(1_234_567.891, 2), "1,234,567.89");
        assert_eq!(grouped(999.0, 0), "999");
        assert_eq!(grouped(999.96, 1), "1,000.0");
        assert_eq!(grouped(-1_000.0, 0), "-1,000");
        assert_eq!(grouped(-0.001, 1), "0.0");
        assert_eq!(grouped(0.0, 0), "0");
        assert_eq!(grouped(1e21, 0), "1,000,000,000,000,000,000,000");
        assert_eq!(grouped(f64::NAN, 1), MISSING);
        assert_eq!(grouped(f64::INFINITY, 0), MISSING);
        assert_eq!(count(1_024u32), "1024");
        assert_eq!(count(u64::MAX), "18446744073709551615");
        assert_eq!(count(7u32), "7");
    }

    #[test]
    fn machine_and_trimmed_numbers() {
        assert_eq!(fixed(1234.5678, 2), "1234.57");
        assert_eq!(fixed(0.5, 0), "0");
        assert_eq!(trim(0.2), "0.2");
        assert_eq!(trim(99.9), "99.9");
        assert_eq!(trim(2.0), "2");
        assert_eq!(trim(1.99999), "2");
        assert_eq!(trim(-0.0001), "0");
    }

    #[test]
    fn plain_values_read_naturally() {
        assert_eq!(plain(0.081), "0.081");
        assert_eq!(plain(126_700.0), "126,700");
        assert_eq!(plain(23.77728), "23.77728");
        assert_eq!(plain(8.03e9), "8.03 × 10⁹");
        assert_eq!(plain(3.35e12), "3.35 × 10¹²");
        assert_eq!(plain(0.0005), "0.0005");
        assert_eq!(plain(2e-5), "2 × 10⁻⁵");
        assert_eq!(plain(-2e-5), "-2 × 10⁻⁵");
        assert_eq!(plain(0.0), "0");
        assert_eq!(plain(4.0), "4");
        assert_eq!(plain(-4.5), "-4.5");
    }

    #[test]
    fn dollars_whole_and_cents() {
        assert_eq!(usd(871_912.4), "$871,912");
        assert_eq!(usd(4_306_416.0), "$4,306,416");
        assert_eq!(usd(12.0), "$12");
        assert_eq!(usd(-1234.0), "-$1,234");
        assert_eq!(usd(0.0), "$0");
        assert_eq!(usd(-0.4), "$0");
        assert_eq!(usd(999.6), "$1,000");
        assert_eq!(usd(f64::NAN), MISSING);
        assert_eq!(usd_cents(2731.114), "$2,731.11");
        assert_eq!(usd_cents(0.999), "$1.00");
        assert_eq!(usd_cents(999.996), "$1,000.00");
        assert_eq!(usd_cents(-12.5), "-$12.50");
        assert_eq!(usd_cents(-0.004), "$0.00");
    }

    #[test]
    fn dollars_compact_pick_their_unit_after_rounding() {
        assert_eq!(usd_or_millions(2_411_036.0), "$2,411,036");
        assert_eq!(usd_or_millions(42_300_000.0), "$42.3M");
        assert_eq!(usd_or_millions(-42_300_000.0), "-$42.3M");
        assert_eq!(usd_or_millions(9_960_000.0), "$9,960,000");
        assert_eq!(usd_compact(1_030_000.0), "$1.03M");
        assert_eq!(usd_compact(26_000.0), "$26k");
        assert_eq!(usd_compact(9_600.0), "$9.6k");
        assert_eq!(usd_compact(950.0), "$950");
        assert_eq!(usd_compact(0.0), "$0");
        assert_eq!(usd_compact(-26_000.0), "-$26k");
        // Rounding carries move to the next unit instead of printing "$1000k" or "$10.0k".
        assert_eq!(usd_compact(999_700.0), "$1.00M");
        assert_eq!(usd_compact(9_970.0), "$10k");
        assert_eq!(usd_compact(999.6), "$1.0k");
        assert_eq!(usd_compact(2.5e9), "$2,500.00M");
    }

    #[test]
    fn axis_ticks_share_one_unit_per_axis() {
        assert_eq!(usd_tick(1_500_000.0, 500_000.0, 2_500_000.0), "$1.5M");
        assert_eq!(usd_tick(0.0, 500_000.0, 2_500_000.0), "$0");
        assert_eq!(usd_tick(750_000.0, 250_000.0, 1_000_000.0), "$0.75M");
        assert_eq!(usd_tick(20_000.0, 10_000.0, 50_000.0), "$20k");
        assert_eq!(usd_tick(2_500.0, 500.0, 5_000.0), "$2,500");
        assert_eq!(usd_tick(-2_500.0, 500.0, 5_000.0), "-$2,500");
        assert_eq!(number_tick(2.5, 0.5), "2.5");
        assert_eq!(number_tick(2_000.0, 500.0), "2,000");
        assert_eq!(number_tick(0.125, 0.125), "0.125");
    }

    #[test]
    fn durations_stay_in_milliseconds() {
        assert_eq!(ms(1.25), "1,250 ms");
        assert_eq!(ms(12.5), "12,500 ms");
        assert_eq!(ms(0.0125), "12.5 ms");
        assert_eq!(ms(0.00085), "0.85 ms");
        assert_eq!(ms(0.0), "0.00 ms");
        assert_eq!(ms(-0.0125), "-12.5 ms");
        // 99.996 ms rounds to 100: printed at the precision of the class it lands in.
        assert_eq!(ms(0.099_996), "100 ms");
        assert_eq!(ms(0.009_996), "10.0 ms");
        assert_eq!(ms(f64::NAN), MISSING);
        assert_eq!(percent(f64::INFINITY, 0), MISSING);
    }

    #[test]
    fn rates_shares_and_multiples() {
        assert_eq!(rps(1_142.4), "1,142 req/s");
        assert_eq!(rps(12.54), "12.5 req/s");
        assert_eq!(rps(0.35), "0.35 req/s");
        assert_eq!(rps(0.0), "0 req/s");
        assert_eq!(rate(99.96), "100");
        assert_eq!(percent(0.123, 0), "12 %");
        assert_eq!(percent(0.9996, 1), "100.0 %");
        assert_eq!(percent(-0.001, 0), "0 %");
        assert_eq!(percent(12.3456, 0), "1,235 %");
        assert_eq!(percent_range(0.62, 0.814, 0), "62–81 %");
        assert_eq!(percent_change(0.0123, 1), "+1.2 %");
        assert_eq!(percent_change(-0.5, 1), "-50.0 %");
        assert_eq!(percent_change(-0.0001, 1), "+0.0 %");
        assert_eq!(percent_short(0.07, 1), "7 %");
        assert_eq!(percent_short(0.075, 1), "7.5 %");
        assert_eq!(percentile(99.0), "p99");
        assert_eq!(percentile(99.9), "p99.9");
        assert_eq!(hours_per_day(4.94), "4.9 h/day");
        assert_eq!(hours_per_day(23.96), "24.0 h/day");
        assert_eq!(times(2.46), "2.5×");
        assert_eq!(times(1_234.5), "1,234.5×");
    }

    #[test]
    fn hardware_units_take_si_prefixes() {
        assert_eq!(bytes(80e9), "80.0 GB");
        assert_eq!(bytes(3.35e12), "3.35 TB");
        assert_eq!(bytes(999.96e9), "1.00 TB");
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(0.0), "0.00 B");
        assert_eq!(bytes_per_s(3.35e12), "3.35 TB/s");
        assert_eq!(flops(989.4e12), "989 TFLOP/s");
        assert_eq!(flops(2.5e15), "2.50 PFLOP/s");
    }
}
