//! Charts of one run: plotters draws each as SVG, usvg parses that SVG once with the vendored
//! font, and the same tree becomes the PNG (resvg) and the PDF figure (krilla-svg), so the text
//! of a chart is identical in every format.
//!
//! Every chart is titled with its finding where one is clear ("… is cheapest from year 3"),
//! uses the Okabe–Ito palette plus marker shapes, and labels its axes with units. A chart
//! without data is not drawn: [`ChartSet::skipped`] says which and why, and the PDF prints it.
//!
//! The charts, in report order (the first two are the PDF's "How sure is this?" section, right
//! after the executive summary; they are skipped, with the reason, when the uncertainty analysis
//! did not run):
//!
//! | file | answers |
//! |---|---|
//! | `tornado` | which uncertain inputs move the margin over the runner-up most, and whether any flips the choice |
//! | `cost-distribution` | how each contending option's cost spreads when every uncertain input varies, and how often it is the cheapest |
//! | `cumulative-cost` | which option is cheapest over the horizon, and when buying pays off |
//! | `break-even` | at what daily use owning beats renting |
//! | `cost-per-million` | what a million requests cost on each option |
//! | `cost-breakdown-<tier>` | where each option's money goes, year by year |
//! | `capacity` | whether each year's fleet covers that year's traffic |
//! | `design-day` | how an autoscaled cloud fleet follows the busiest day |
//! | `latency-tokens-<tier>` | under a contract on time to first token / per output token: how much load the planned fleet takes before either breaks its bound |
//! | `latency-<tier>` | how much load a tier's planned fleet takes before the tail breaks the SLO |
//! | `latency-cdf` | what latency requests see at the planned fleet |

mod break_even;
mod breakdown;
mod capacity;
mod cumulative;
pub mod distribution;
pub mod draw;
mod latency;
mod line;
mod per_million;
pub mod tornado;

use rayon::prelude::*;

use crate::cost::OptionCost;
use crate::hardware::DeploymentOption;
use crate::report::fonts;
use crate::results::{RunResults, TierResult};

/// PNG pixels per SVG unit: 800-unit charts become 1,600-pixel PNGs, sharp on slides and paper.
pub const PNG_SCALE: f32 = 2.0;

/// Something went wrong drawing, reading back or rasterising a chart (a defect, not bad input).
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("drawing chart `{chart}`: {message}")]
    Draw { chart: String, message: String },
    #[error("reading back chart `{chart}`: {source}")]
    Parse {
        chart: String,
        #[source]
        source: usvg::Error,
    },
    #[error("rendering chart `{chart}` as PNG: {message}")]
    Png { chart: String, message: String },
}

/// One chart, ready to write as SVG or PNG or to place in the PDF.
#[derive(Debug)]
pub struct Chart {
    /// File stem: `break-even` becomes `break-even.svg` and `break-even.png`.
    pub name: String,
    /// The finding, as drawn at the top of the chart.
    pub title: String,
    /// What the chart answers and how it was made (the PDF caption).
    pub caption: String,
    /// The SVG file's text (text kept as text, font "DejaVu Sans" then generic fallbacks).
    pub svg: String,
    /// The SVG parsed once with the vendored font; PNG and PDF are drawn from it.
    pub tree: usvg::Tree,
}

/// A chart that was not drawn, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// File stem it would have had.
    pub name: String,
    /// What it would have shown, e.g. "tail latency against offered load".
    pub what: String,
    pub reason: String,
}

/// Every chart of a run, in report order, and the ones left out.
#[derive(Debug)]
pub struct ChartSet {
    pub charts: Vec<Chart>,
    pub skipped: Vec<Skipped>,
}

impl Skipped {
    /// The chart `name`, which would have shown `what`, is left out because of `reason`.
    pub(crate) fn new(name: &str, what: &str, reason: &str) -> Skipped {
        Skipped {
            name: name.into(),
            what: what.into(),
            reason: reason.into(),
        }
    }
}

/// "AWS p5.48xlarge · reserved-3y": how a title names one tier's option.
pub(crate) fn option_name(tier: &str, option: DeploymentOption) -> String {
    format!("{tier} · {option}")
}

/// A drawn chart before it is parsed.
struct Drawn {
    name: String,
    title: String,
    caption: String,
    svg: String,
}

/// What a chart builder gives back: charts, or the reason there are none.
type Built = Result<Vec<Drawn>, Skipped>;

/// Draws one kind of chart.
type Builder = fn(&Context<'_>) -> Result<Built, ChartError>;

/// Draw every chart of `results`.
pub fn render_all(results: &RunResults) -> Result<ChartSet, ChartError> {
    fonts::register_for_plotters();
    let ctx = Context::new(results);
    let builders: [Builder; 10] = [
        tornado::tornado,
        distribution::distribution,
        cumulative::cumulative,
        break_even::break_even,
        per_million::per_million,
        breakdown::breakdown,
        capacity::years,
        capacity::design_day,
        latency::curves,
        latency::cdf,
    ];
    let mut drawn = Vec::new();
    let mut skipped = Vec::new();
    for b in builders {
        match b(&ctx)? {
            Ok(d) => drawn.extend(d),
            Err(s) => skipped.push(s),
        }
    }
    // Parsing lays out the text with the vendored font; independent per chart.
    let charts = drawn
        .into_par_iter()
        .map(finish)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ChartSet { charts, skipped })
}

impl ChartSet {
    /// Every chart as PNG bytes, in order (rendered in parallel).
    pub fn pngs(&self) -> Result<Vec<Vec<u8>>, ChartError> {
        self.charts.par_iter().map(Chart::png).collect()
    }
}

/// usvg options that resolve every font to the vendored DejaVu Sans and load nothing else.
pub fn usvg_options() -> usvg::Options<'static> {
    usvg::Options {
        font_family: fonts::FAMILY.into(),
        fontdb: fonts::fontdb(),
        ..usvg::Options::default()
    }
}

impl Chart {
    /// The chart as PNG at [`PNG_SCALE`] pixels per unit, white background.
    pub fn png(&self) -> Result<Vec<u8>, ChartError> {
        let err = |message: String| ChartError::Png {
            chart: self.name.clone(),
            message,
        };
        let size = self
            .tree
            .size()
            .to_int_size()
            .scale_by(PNG_SCALE)
            .ok_or_else(|| err("zero size".into()))?;
        let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height())
            .ok_or_else(|| err(format!("cannot allocate {size:?}")))?;
        pixmap.fill(resvg::tiny_skia::Color::WHITE);
        resvg::render(
            &self.tree,
            resvg::tiny_skia::Transform::from_scale(PNG_SCALE, PNG_SCALE),
            &mut pixmap.as_mut(),
        );
        pixmap.encode_png().map_err(|e| err(e.to_string()))
    }
}

/// Give the SVG a title and description, name the vendored font first, and parse it.
fn finish(d: Drawn) -> Result<Chart, ChartError> {
    let svg = decorate(&d.svg, &d.title, &d.caption);
    let tree = usvg::Tree::from_str(&svg, &usvg_options()).map_err(|source| ChartError::Parse {
        chart: d.name.clone(),
        source,
    })?;
    Ok(Chart {
        name: d.name,
        title: d.title,
        caption: d.caption,
        svg,
        tree,
    })
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Plotters writes `font-family="sans-serif"`; name the face the layout was measured with, so
/// a viewer that has DejaVu shows exactly the PDF's text, and `<title>`/`<desc>` for screen
/// readers and file browsers.
fn decorate(svg: &str, title: &str, caption: &str) -> String {
    let svg = svg.replace(
        "font-family=\"sans-serif\"",
        &format!("font-family=\"{}\"", fonts::SVG_FONT_FAMILY),
    );
    match svg.find('>') {
        Some(i) if svg.starts_with("<svg") => format!(
            "{}>\n<title>{}</title>\n<desc>{}</desc>{}",
            &svg[..i],
            xml_escape(title),
            xml_escape(caption),
            &svg[i + 1..]
        ),
        _ => svg,
    }
}

/// One tier × option line of the cost charts, with the colour and marker it keeps in every
/// chart.
#[derive(Debug, Clone)]
pub(crate) struct Series<'a> {
    pub tier: &'a TierResult,
    pub cost: &'a OptionCost,
    pub label: String,
    pub color: plotters::style::RGBColor,
    pub marker: draw::Marker,
    /// Lines of every other tier are dashed, so tiers stay apart where markers are sparse.
    pub dashed: bool,
    /// Other tier × option pairs that cost exactly the same and are drawn as this one line
    /// (its label names them: "reserved-3y = hybrid-3y").
    pub same: Vec<(&'a str, DeploymentOption)>,
}

impl Series<'_> {
    /// The legend entry of this series.
    pub fn swatch(&self) -> draw::Swatch {
        if self.dashed {
            draw::Swatch::DashedLine(self.marker)
        } else {
            draw::Swatch::Line(self.marker)
        }
    }
}

/// The kinds of deployment a cost chart shows one line for (its cheapest option).
fn kind(o: DeploymentOption) -> u8 {
    use DeploymentOption as D;
    match o {
        D::OnPrem => 0,
        D::OnDemand => 1,
        D::Reserved1y | D::Reserved3y => 2,
        D::Hybrid1y | D::Hybrid3y => 3,
        D::Spot => 4,
    }
}

/// The lines the cost charts (cumulative cost, break-even) draw: the recommended option, the
/// runner-up and the cheapest option of each deployment kind (on-prem, on-demand, reserved,
/// hybrid, spot), ranked as the recommendation ranks (tiers meeting the contract first, then
/// net present cost). Options that cost the same to the dollar in every year are one line
/// labelled "A = B". Each line gets its own colour (its option's, unless a line drawn before
/// took it) and its own marker. Returns the lines, best first, and the labels left out.
pub(crate) fn shown_series<'a>(
    results: &'a RunResults,
    series: &[Series<'a>],
) -> (Vec<Series<'a>>, Vec<String>) {
    let one_tier = results.tiers.len() == 1;
    let costed: Vec<&Series<'a>> = series
        .iter()
        .filter(|s| !s.cost.yearly.is_empty())
        .collect();
    // Equal series: the same discounted cost in every year and the same net present cost.
    let equal = |a: &OptionCost, b: &OptionCost| {
        a.yearly.len() == b.yearly.len()
            && (a.net_present_cost_usd - b.net_present_cost_usd).abs() < 1.0
            && a.yearly
                .iter()
                .zip(&b.yearly)
                .all(|(x, y)| (x.discounted_usd - y.discounted_usd).abs() < 1.0)
    };
    let mut groups = equal_groups(costed, |a, b| equal(a.cost, b.cost));
    let rank = |g: &Vec<&Series<'a>>| (!g[0].tier.meets_slo(), g[0].cost.net_present_cost_usd);
    groups.sort_by(|a, b| {
        let (ka, kb) = (rank(a), rank(b));
        ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
    });
    let holds = |g: &Vec<&Series<'a>>, c: &crate::results::Choice| {
        g.iter()
            .any(|s| s.tier.name == c.tier && s.cost.option == c.option)
    };
    let mut keep = vec![false; groups.len()];
    if let Some(rec) = &results.recommendation {
        for c in std::iter::once(&rec.best).chain(rec.runner_up.as_ref()) {
            if let Some(i) = groups.iter().position(|g| holds(g, c)) {
                keep[i] = true;
            }
        }
    }
    for k in 0..=4 {
        if let Some(i) = groups
            .iter()
            .position(|g| g.iter().any(|s| kind(s.cost.option) == k))
        {
            keep[i] = true;
        }
    }
    let mut shown: Vec<Series<'a>> = vec![];
    let mut left_out = vec![];
    let mut used_colors: Vec<plotters::style::RGBColor> = vec![];
    for (g, keep) in groups.iter().zip(keep) {
        let names: Vec<String> = g
            .iter()
            .enumerate()
            .map(|(i, s)| {
                if one_tier || (i > 0 && s.tier.name == g[0].tier.name) {
                    s.cost.option.to_string()
                } else {
                    format!("{} · {}", s.tier.name, s.cost.option)
                }
            })
            .collect();
        if !keep {
            left_out.extend(g.iter().map(|s| s.label.clone()));
            continue;
        }
        let first = g[0];
        let color = if used_colors.contains(&first.color) {
            draw::OKABE_ITO
                .iter()
                .copied()
                .find(|c| !used_colors.contains(c))
                .unwrap_or(first.color)
        } else {
            first.color
        };
        used_colors.push(color);
        shown.push(Series {
            label: merged_label(&names),
            color,
            marker: draw::Marker::nth(shown.len()),
            same: g[1..]
                .iter()
                .map(|s| (s.tier.name.as_str(), s.cost.option))
                .collect(),
            ..first.clone()
        });
    }
    (shown, left_out)
}

/// The items that draw the same line, grouped, in order of first appearance: every chart draws
/// such a group once, labelled with [`merged_label`] ("A = B"), so no series hides another.
pub(crate) fn equal_groups<T>(
    items: impl IntoIterator<Item = T>,
    same: impl Fn(&T, &T) -> bool,
) -> Vec<Vec<T>> {
    let mut groups: Vec<Vec<T>> = vec![];
    for item in items {
        match groups.iter_mut().find(|g| same(&g[0], &item)) {
            Some(g) => g.push(item),
            None => groups.push(vec![item]),
        }
    }
    groups
}

/// The label of a group of equal series: their names joined by " = ".
pub(crate) fn merged_label<S: AsRef<str>>(names: &[S]) -> String {
    names
        .iter()
        .map(AsRef::as_ref)
        .collect::<Vec<_>>()
        .join(" = ")
}

/// Whether two drawn point sequences are the same line: as many points, each within a
/// millionth of the larger coordinate (or 1e-12 near zero) of its twin.
pub(crate) fn same_points(a: &[(f64, f64)], b: &[(f64, f64)]) -> bool {
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-6 * x.abs().max(y.abs()).max(1e-6);
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(p, q)| close(p.0, q.0) && close(p.1, q.1))
}

/// What every chart builder reads.
pub(crate) struct Context<'a> {
    pub results: &'a RunResults,
    pub series: Vec<Series<'a>>,
    /// The lines the cumulative-cost and break-even charts draw ([`shown_series`]).
    pub shown: Vec<Series<'a>>,
    /// Labels of the options those charts leave out.
    pub left_out: Vec<String>,
    pub footer: String,
    /// The SLO as (percentile, bound [s]), read from the scenario's label "p99 ≤ 200 ms".
    pub slo: Option<(f64, f64)>,
}

impl<'a> Context<'a> {
    fn new(results: &'a RunResults) -> Context<'a> {
        let one_tier = results.tiers.len() == 1;
        let mut series = Vec::new();
        for (ti, t) in results.tiers.iter().enumerate() {
            for o in &t.options {
                series.push(Series {
                    tier: t,
                    cost: o,
                    label: if one_tier {
                        o.option.label().to_string()
                    } else {
                        format!("{} · {}", t.name, o.option)
                    },
                    color: draw::option_color(o.option),
                    marker: draw::Marker::nth(ti),
                    dashed: ti % 2 == 1,
                    same: vec![],
                });
            }
        }
        let (shown, left_out) = shown_series(results, &series);
        Context {
            results,
            series,
            shown,
            left_out,
            footer: format!(
                "{} · tco-sim {}",
                results.scenario.name, results.tool_version
            ),
            slo: results
                .scenario
                .slo_latency_s
                .map(|bound| (results.scenario.slo_percentile, bound)),
        }
    }

    /// The drawn cost-chart line that stands for `tier` × `option` (itself, or a line it
    /// costs the same as).
    pub fn shown_for(&self, tier: &str, option: DeploymentOption) -> Option<&Series<'a>> {
        self.shown.iter().find(|s| {
            (s.tier.name == tier && s.cost.option == option)
                || s.same.iter().any(|&(t, o)| t == tier && o == option)
        })
    }

    /// "Left out: 5 dearer options (…)." for a cost chart's caption; empty when all are drawn.
    pub fn left_out_sentence(&self) -> String {
        match self.left_out.len() {
            0 => String::new(),
            n => format!(
                " Drawn: the recommended option, the runner-up and the cheapest option of each \
                 deployment kind (on-prem, on-demand, reserved, hybrid, spot); left out, all \
                 dearer than the line of their kind and listed in the cost table: {} ({}).",
                if n == 1 {
                    "one option".to_string()
                } else {
                    format!("{n} options")
                },
                self.left_out.join(", ")
            ),
        }
    }

    /// The colour and marker a tier takes in charts about tiers (capacity, latency).
    pub fn tier_color(&self, tier: &str) -> (plotters::style::RGBColor, draw::Marker) {
        let i = self
            .results
            .tiers
            .iter()
            .position(|t| t.name == tier)
            .unwrap_or(0);
        (draw::color(i), draw::Marker::nth(i))
    }

    pub fn years(&self) -> u32 {
        self.results.scenario.horizon_years
    }
}

fn draw_error(chart: &str) -> impl Fn(Box<dyn std::error::Error + Send + Sync>) -> ChartError {
    let chart = chart.to_string();
    move |e| ChartError::Draw {
        chart: chart.clone(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoration_adds_title_and_font() {
        let s = decorate(
            "<svg width=\"1\" height=\"1\" xmlns=\"http://www.w3.org/2000/svg\">\n<text font-family=\"sans-serif\">a</text></svg>",
            "A & B",
            "c",
        );
        assert!(s.contains("<title>A &amp; B</title>"));
        assert!(s.contains("font-family=\"DejaVu Sans, Verdana, sans-serif\""));
    }
}
