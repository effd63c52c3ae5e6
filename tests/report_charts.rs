//! The charts, checked the way a reader meets them: every SVG parses and carries its title,
//! series and axis labels; no two pieces of text overlap and none is cut off at the edge; the
//! PNG decodes at the right size with ink in it; chart text is drawn from the vendored font
//! alone; latency charts appear with latency data and are skipped, with a reason, without it;
//! degenerate runs draw without panicking; and the same results give the same bytes.

mod report_fixtures;

use report_fixtures::{
    MIXED, SHIPPED, degenerate, empty, from_toml, out_dir, shipped, shipped_uncertain, with_latency,
};
use tco_sim::report::charts::{self, Chart, ChartSet};
use usvg::roxmltree;

fn render(r: &tco_sim::results::RunResults) -> ChartSet {
    charts::render_all(r).expect("charts render")
}

fn chart<'a>(set: &'a ChartSet, name: &str) -> &'a Chart {
    set.charts
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| {
            panic!(
                "no chart `{name}` among {:?}",
                set.charts.iter().map(|c| &c.name).collect::<Vec<_>>()
            )
        })
}

/// Every `<text>` of the SVG file, as written.
fn svg_texts(c: &Chart) -> Vec<String> {
    let doc = roxmltree::Document::parse(&c.svg).expect("SVG is well-formed XML");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect()
}

fn assert_has(c: &Chart, wanted: &[&str]) {
    let texts = svg_texts(c);
    for w in wanted {
        assert!(
            texts.iter().any(|t| t.contains(w)),
            "chart `{}` has no text containing {w:?}; it has {texts:?}",
            c.name
        );
    }
}

/// The laid-out box of every text node of the parsed tree (canvas coordinates, rotation
/// included), with the text; empty boxes for text that produced no glyph outlines.
fn glyph_boxes(tree: &usvg::Tree) -> Vec<(String, usvg::Rect)> {
    fn walk(g: &usvg::Group, out: &mut Vec<(String, usvg::Rect)>) {
        for n in g.children() {
            match n {
                usvg::Node::Group(g) => walk(g, out),
                usvg::Node::Text(t) => {
                    let s: String = t.chunks().iter().map(|c| c.text()).collect();
                    let outlined = t.flattened().children().iter().any(|n| match n {
                        usvg::Node::Group(g) => !g.children().is_empty(),
                        _ => true,
                    });
                    let b = t.abs_bounding_box();
                    let empty = usvg::Rect::from_xywh(b.left(), b.top(), 0.0, 0.0);
                    out.push((s, if outlined { b } else { empty.unwrap_or(b) }));
                }
                _ => {}
            }
        }
    }
    let mut out = vec![];
    walk(tree.root(), &mut out);
    out
}

#[test]
fn every_chart_parses_and_shows_its_series_and_labels() {
    let r = with_latency(from_toml(MIXED));
    let set = render(&r);
    let names: Vec<&str> = set.charts.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "cumulative-cost",
            "break-even",
            "cost-per-million",
            "cost-breakdown-altra-on-prem",
            "cost-breakdown-inferentia2-cloud",
            "capacity",
            "design-day",
            "latency-altra-on-prem",
            "latency-inferentia2-cloud",
            "latency-cdf",
        ]
    );
    // Only the uncertainty charts are left out: this run has no uncertainty analysis attached.
    assert!(
        set.skipped
            .iter()
            .all(|s| s.name == "tornado" || s.name == "cost-distribution"),
        "{:?}",
        set.skipped
    );
    for c in &set.charts {
        // The title is drawn and stored as the SVG's <title>; usvg parsed it (the tree exists).
        assert!(
            c.svg
                .contains(&format!("<title>{}</title>", c.title.replace('&', "&amp;")))
        );
        assert!(!c.caption.is_empty());
        assert_eq!(c.tree.size().width(), 800.0);
    }
    assert_has(
        chart(&set, "cumulative-cost"),
        &[
            "Cumulative discounted cost (USD)",
            "End of year",
            "Altra on-prem · on-prem",
            "Inferentia2 cloud · on-demand",
            "Inferentia2 cloud · reserved-3y",
            "$0",
        ],
    );
    let be = chart(&set, "break-even");
    assert_has(
        be,
        &[
            "Daily use (hours per day)",
            "Net present cost (USD)",
            "Altra on-prem · on-prem",
            "h/day",
        ],
    );
    // Every exact break-even inside the day is labelled with its hours.
    for b in &r.break_even {
        if let tco_sim::cost::ExactBreakEven::At { hours_per_day, .. } = b.exact {
            assert_has(be, &[&format!("{hours_per_day:.1} h/day")]);
        }
    }
    let cpm = chart(&set, "cost-per-million");
    for t in &r.tiers {
        for o in &t.options {
            if let Some(v) = o.cost_per_million_usd {
                assert_has(cpm, &[&tco_sim::format::usd_cents(v)]);
            }
        }
    }
    assert_has(
        chart(&set, "cost-breakdown-altra-on-prem"),
        &["capex (purchase + install)", "energy", "Year", "on-prem"],
    );
    assert_has(
        chart(&set, "cost-breakdown-inferentia2-cloud"),
        &["cloud instance fees", "on-demand", "reserved-1y"],
    );
    assert_has(
        chart(&set, "capacity"),
        &["design peak traffic", "Requests", "Year"],
    );
    assert_has(
        chart(&set, "design-day"),
        &["Instances running", "request rate (left axis)", "12:00"],
    );
    assert_has(
        chart(&set, "latency-altra-on-prem"),
        &[
            "p50",
            "p95",
            "p99",
            "SLO: p99 ≤ 200 ms",
            "Latency (ms)",
            "Offered load (requests per second)",
        ],
    );
    assert_has(
        chart(&set, "latency-cdf"),
        &["SLO bound 200 ms", "Requests answered within (%)", "100 %"],
    );
    // The hockey stick's title reads the knee off the data (p99 reaches 200 ms at 85 % busy).
    assert!(
        chart(&set, "latency-altra-on-prem")
            .title
            .contains("p99 stays within 200 ms up to"),
        "{}",
        chart(&set, "latency-altra-on-prem").title
    );
}

/// No text of chart `c` overlaps other text or leaves the canvas.
fn assert_text_fits(tag: &str, c: &Chart) {
    let boxes = glyph_boxes(&c.tree);
    assert!(boxes.len() > 5, "{tag}/{}: {} texts", c.name, boxes.len());
    let size = c.tree.size();
    for (i, (ta, a)) in boxes.iter().enumerate() {
        assert!(
            a.left() >= 0.0
                && a.top() >= 0.0
                && a.right() <= size.width()
                && a.bottom() <= size.height(),
            "{tag}/{}: {ta:?} is cut off at {a:?}",
            c.name
        );
        for (tb, b) in &boxes[i + 1..] {
            let overlap_x = a.right().min(b.right()) - a.left().max(b.left());
            let overlap_y = a.bottom().min(b.bottom()) - a.top().max(b.top());
            assert!(
                overlap_x <= 0.5 || overlap_y <= 0.5,
                "{tag}/{}: {ta:?} {a:?} overlaps {tb:?} {b:?}",
                c.name
            );
        }
    }
}

#[test]
fn no_text_overlaps_other_text_or_leaves_the_canvas() {
    for (tag, r) in [
        ("mixed", with_latency(from_toml(MIXED))),
        ("h100", shipped("h100-current-prices")),
        ("seed", shipped("seed-8xh100")),
        ("starter", shipped("starter")),
    ] {
        for c in render(&r).charts {
            assert_text_fits(tag, &c);
        }
    }
}

/// The shipped scenarios with the uncertainty analysis, as `tco-sim run` makes them (200
/// samples instead of 1,000, to keep the test quick).
fn shipped_with_uncertainty() -> Vec<(&'static str, tco_sim::results::RunResults)> {
    SHIPPED
        .iter()
        .map(|n| (*n, shipped_uncertain(n, 200)))
        .collect()
}

#[test]
fn tornado_and_distribution_charts_fit_and_say_what_the_analysis_found() {
    for (tag, r) in shipped_with_uncertainty() {
        let set = render(&r);
        // Report order: the uncertainty charts come first (the PDF's "How sure is this?").
        let names: Vec<&str> = set.charts.iter().map(|c| c.name.as_str()).collect();
        let s = r
            .sensitivity
            .as_ref()
            .unwrap_or_else(|| panic!("{tag}: no sensitivity"));
        let shown: Vec<_> = s
            .tornado
            .iter()
            .filter(|x| x.swing_usd > 0.0)
            .take(12)
            .collect();
        let d = chart(&set, "cost-distribution");
        assert_text_fits(tag, d);
        if shown.is_empty() {
            // Seed 004 counts none of the costs its estimates feed: nothing to draw, and why.
            let skip = set.skipped.iter().find(|x| x.name == "tornado").expect(tag);
            assert!(
                skip.reason.contains("moves the ranking figure"),
                "{tag}: {skip:?}"
            );
            assert_eq!(names[0], "cost-distribution", "{tag}");
        } else {
            assert_eq!(&names[..2], ["tornado", "cost-distribution"], "{tag}");
        }
        check_distribution(tag, &r, d);
        if shown.is_empty() {
            continue;
        }
        let t = chart(&set, "tornado");
        assert_text_fits(tag, t);

        // Tornado: the rows drawn are the widest swings, in order, and the title names the top.
        assert!(
            shown.windows(2).all(|w| w[0].swing_usd >= w[1].swing_usd),
            "{tag}"
        );
        let texts = svg_texts(t);
        let field = |input: &str| -> String {
            // The label drawn for a row is the field after its tier (or `costs.`, …).
            let rest = input.strip_prefix("tier.").map_or(input, |rest| {
                r.tiers
                    .iter()
                    .filter_map(|tr| rest.strip_prefix(&format!("{}.", tr.name)))
                    .min_by_key(|f| f.len())
                    .unwrap_or(rest)
            });
            if input.starts_with("tier.") {
                rest.to_string()
            } else {
                rest.split_once('.').map_or(rest, |(_, f)| f).to_string()
            }
        };
        let mut at = 0;
        for row in &shown {
            let f = field(&row.input);
            let pos = texts[at..]
                .iter()
                .position(|x| *x == f)
                .unwrap_or_else(|| panic!("{tag}: row {f:?} not drawn after {at} in {texts:?}"));
            at += pos + 1;
        }
        assert!(
            t.title.contains(&field(&shown[0].input)),
            "{tag}: {}",
            t.title
        );
        let flips = s.flip_points.iter().any(|f| f.flips);
        assert_eq!(
            t.title
                .contains("nothing within its range flips the choice"),
            !flips,
            "{tag}: {}",
            t.title
        );
        // Every value at a bar end is labelled.
        for row in &shown {
            for v in [row.low_value, row.high_value] {
                let label = tco_sim::format::figures3(v);
                assert!(texts.contains(&label), "{tag}: {label} not in {texts:?}");
            }
        }
        assert!(
            t.caption
                .contains(&format!("of {} uncertain inputs", s.tornado.len()))
                || t.caption.contains(&format!("All {}", s.tornado.len())),
            "{tag}: {}",
            t.caption
        );
    }
}

/// The distribution chart's title gives the recommended option's p_cheapest, its label too,
/// and every option that is ever the cheapest is drawn.
fn check_distribution(tag: &str, r: &tco_sim::results::RunResults, d: &Chart) {
    use tco_sim::format::{count, percent};
    let u = r.uncertainty.as_ref().expect("uncertainty");
    // Distribution: the probability in the title is the recommended option's p_cheapest.
    let rec = r.recommendation.as_ref().unwrap();
    let best = u
        .options
        .iter()
        .find(|o| o.tier == rec.best.tier && o.option == rec.best.option)
        .unwrap();
    assert!(
        d.title.contains(&format!(
            "in {}",
            tco_sim::report::charts::distribution::share(best.p_cheapest)
        )) && d
            .title
            .contains(&format!("of {} samples", count(u.samples))),
        "{tag}: {} (p_cheapest {})",
        d.title,
        best.p_cheapest
    );
    let dtexts = svg_texts(d);
    assert!(
        dtexts
            .iter()
            .any(|x| x.starts_with(&format!("cheapest in {}", percent(best.p_cheapest, 1)))),
        "{tag}: {dtexts:?}"
    );
    // Every option that is ever the cheapest is drawn.
    for o in u.options.iter().filter(|o| o.p_cheapest > 0.0) {
        assert!(
            dtexts.iter().any(|x| x.contains(&o.option.to_string())),
            "{tag}: {} {} missing",
            o.tier,
            o.option
        );
    }
}

#[test]
fn uncertainty_charts_are_skipped_with_the_reason_when_the_analysis_did_not_run() {
    let set = render(&shipped("starter"));
    for name in ["tornado", "cost-distribution"] {
        assert!(set.charts.iter().all(|c| c.name != name));
        let s = set.skipped.iter().find(|s| s.name == name).expect(name);
        assert!(
            s.reason.contains("uncertainty analysis did not run"),
            "{}",
            s.reason
        );
    }
}

#[test]
fn latency_charts_are_skipped_with_a_reason_when_there_is_no_latency_data() {
    let set = render(&shipped("h100-current-prices"));
    assert!(set.charts.iter().all(|c| !c.name.starts_with("latency")));
    let skipped: Vec<&str> = set.skipped.iter().map(|s| s.name.as_str()).collect();
    assert!(skipped.contains(&"latency") && skipped.contains(&"latency-cdf"));
    for s in &set.skipped {
        assert!(!s.reason.is_empty() && !s.what.is_empty());
    }
    let latency = set.skipped.iter().find(|s| s.name == "latency").unwrap();
    assert!(latency.reason.contains("analytic"), "{}", latency.reason);
    // Fixed one-unit fleets do not autoscale: no design-day chart either, and it says why.
    assert!(
        set.skipped
            .iter()
            .any(|s| s.name == "design-day" && s.reason.contains("autoscaled"))
    );
}

#[test]
fn png_is_the_svg_at_twice_the_size_with_ink_where_the_text_is() {
    let set = render(&shipped("h100-current-prices"));
    let c = chart(&set, "break-even");
    let png = c.png().expect("PNG renders");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let pix = resvg::tiny_skia::Pixmap::decode_png(&png).expect("PNG decodes");
    let size = c.tree.size();
    assert_eq!(
        (pix.width(), pix.height()),
        (
            (size.width() * charts::PNG_SCALE) as u32,
            (size.height() * charts::PNG_SCALE) as u32
        )
    );
    assert_eq!(pix.width(), 1600);
    let dark = |x0: u32, y0: u32, x1: u32, y1: u32| {
        let mut n = 0;
        for y in y0..y1 {
            for x in x0..x1 {
                let p = pix.pixel(x, y).unwrap();
                if (p.red() as u32 + p.green() as u32 + p.blue() as u32) < 3 * 100 {
                    n += 1;
                }
            }
        }
        n
    };
    // Not blank overall, and the title band (text only: no lines or bars there) has glyphs.
    let total = dark(0, 0, pix.width(), pix.height());
    assert!(total > 20_000, "{total} dark pixels");
    let title = dark(0, 30, 1600, 80);
    assert!(title > 3_000, "{title} dark pixels in the title band");
    let (_dir, _keep) = out_dir("png");
    if std::env::var_os("TCO_SIM_KEEP_REPORTS").is_some() {
        std::fs::write(_dir.join("break-even.png"), &png).unwrap();
    }
}

#[test]
fn chart_text_comes_from_the_vendored_font_alone() {
    // The database the charts use holds exactly the two vendored faces: no system font is
    // ever loaded, so a machine without fonts draws the same text.
    let db = tco_sim::report::fonts::fontdb();
    assert_eq!(db.len(), 2);
    assert!(db.faces().all(|f| f.families[0].0 == "DejaVu Sans"));
    // Every text node was laid out into glyph outlines; a missing font leaves none.
    let set = render(&shipped("starter"));
    for c in &set.charts {
        for (text, bbox) in glyph_boxes(&c.tree) {
            if text.trim().is_empty() {
                continue;
            }
            assert!(
                bbox.width() > 0.0 && bbox.height() > 0.0,
                "{}: {text:?} has no outlines",
                c.name
            );
        }
    }
    // Parsing with an empty font database, as a viewer without the font would, loses the text:
    // the check above would catch a chart that relied on system fonts.
    let c = chart(&set, "capacity");
    let bare = usvg::Options {
        fontdb: std::sync::Arc::new(usvg::fontdb::Database::new()),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(&c.svg, &bare).unwrap();
    assert!(glyph_boxes(&tree).is_empty());
}

#[test]
fn degenerate_runs_draw_without_panicking() {
    for r in [degenerate(), empty()] {
        let set = render(&r);
        set.pngs().expect("PNGs render");
        for c in &set.charts {
            assert!(!c.svg.is_empty());
        }
        assert!(set.skipped.iter().any(|s| s.name == "break-even"));
    }
    let set = render(&degenerate());
    let names: Vec<&str> = set.charts.iter().map(|c| c.name.as_str()).collect();
    assert!(names.contains(&"cumulative-cost"), "{names:?}");
    assert!(set.skipped.iter().any(|s| s.name == "cost-per-million"));
    let set = render(&empty());
    assert!(set.charts.is_empty());
}

#[test]
fn same_results_give_the_same_bytes() {
    let r = with_latency(from_toml(MIXED));
    let (a, b) = (render(&r), render(&r));
    assert_eq!(a.charts.len(), b.charts.len());
    for (x, y) in a.charts.iter().zip(&b.charts) {
        assert_eq!(x.svg, y.svg, "{}", x.name);
    }
    assert_eq!(a.pngs().unwrap(), b.pngs().unwrap());
    if let (dir, None) = out_dir("charts") {
        for (c, png) in a.charts.iter().zip(a.pngs().unwrap()) {
            std::fs::write(dir.join(format!("{}.svg", c.name)), &c.svg).unwrap();
            std::fs::write(dir.join(format!("{}.png", c.name)), png).unwrap();
        }
    }
}

/// The README's tornado picture, `docs/tornado.svg`, is this code's chart of a shipped scenario
/// (h100-current-prices, analytic sizing), and its finding is still the chart's:
/// `BLESS=1 cargo test --test report_charts docs_tornado` writes it again.
#[test]
fn docs_tornado_svg_is_drawn_by_the_code_and_still_true() {
    let path = report_fixtures::repo("docs/tornado.svg");
    let r = shipped_uncertain("h100-current-prices", tco_sim::uncertainty::DEFAULT_SAMPLES);
    let set = render(&r);
    let c = chart(&set, "tornado");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, &c.svg).expect("write docs/tornado.svg");
    }
    let svg = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "docs/tornado.svg (the README's picture) is missing ({e}): \
             BLESS=1 cargo test --test report_charts docs_tornado writes it"
        )
    });
    usvg::Tree::from_str(&svg, &charts::usvg_options()).expect("docs/tornado.svg parses");
    let title = format!("<title>{}</title>", c.title.replace('&', "&amp;"));
    assert!(
        svg.contains(&title),
        "docs/tornado.svg no longer shows what the chart finds ({}): \
         BLESS=1 cargo test --test report_charts docs_tornado writes it again",
        c.title
    );
}
/// Every shipped scenario as planned, and again with simulator-shaped latency data so that the
/// latency charts are drawn too.
fn every_shipped() -> Vec<(String, tco_sim::results::RunResults)> {
    let mut out = vec![];
    for name in report_fixtures::SHIPPED {
        let r = shipped(name);
        out.push((format!("{name}+latency"), with_latency(r.clone())));
        out.push((name.to_string(), r));
    }
    out
}

#[test]
fn no_title_is_cut_and_no_text_overlaps_in_any_shipped_scenario() {
    for (tag, r) in every_shipped() {
        for c in render(&r).charts {
            let texts = svg_texts(&c);
            // The title is drawn whole, on as many lines as it takes, at the top.
            let whole = (1..=texts.len()).any(|k| texts[..k].join(" ") == c.title);
            assert!(
                whole && !c.title.contains('…'),
                "{tag}/{}: title {:?} is not drawn whole: {:?}",
                c.name,
                c.title,
                &texts[..texts.len().min(4)]
            );
            let boxes = glyph_boxes(&c.tree);
            let size = c.tree.size();
            for (i, (ta, a)) in boxes.iter().enumerate() {
                assert!(
                    a.left() >= 0.0
                        && a.top() >= 0.0
                        && a.right() <= size.width()
                        && a.bottom() <= size.height(),
                    "{tag}/{}: {ta:?} is cut off at {a:?}",
                    c.name
                );
                for (tb, b) in &boxes[i + 1..] {
                    let overlap_x = a.right().min(b.right()) - a.left().max(b.left());
                    let overlap_y = a.bottom().min(b.bottom()) - a.top().max(b.top());
                    assert!(
                        overlap_x <= 0.5 || overlap_y <= 0.5,
                        "{tag}/{}: {ta:?} {a:?} overlaps {tb:?} {b:?}",
                        c.name
                    );
                }
            }
            // Durations are written in seconds from a second on, sizes never as powers of ten.
            for t in &texts {
                let thousands_of_ms = t
                    .split(" ms")
                    .next()
                    .filter(|_| t.contains(" ms"))
                    .and_then(|head| head.rsplit(' ').next())
                    .is_some_and(|n| n.contains(','));
                assert!(
                    !thousands_of_ms && !t.contains("× 10"),
                    "{tag}/{}: {t:?} should be in s / GB",
                    c.name
                );
            }
        }
    }
}

#[test]
fn cost_charts_draw_few_distinct_lines_and_say_what_is_left_out() {
    for name in report_fixtures::SHIPPED {
        let r = shipped(name);
        let set = render(&r);
        let cum = chart(&set, "cumulative-cost");
        let costed: usize = r
            .tiers
            .iter()
            .map(|t| t.options.iter().filter(|o| !o.yearly.is_empty()).count())
            .sum();
        // Legend entries are the lines: at most the recommended, the runner-up and one per kind.
        let legend: Vec<String> = svg_texts(cum)
            .into_iter()
            .filter(|t| {
                r.tiers.iter().any(|tier| {
                    tier.options
                        .iter()
                        .any(|o| t.ends_with(&o.option.to_string()) && !t.contains(':'))
                })
            })
            .collect();
        assert!(
            !legend.is_empty() && legend.len() <= 7,
            "{name}: {legend:?}"
        );
        let mut seen = legend.clone();
        seen.sort();
        seen.dedup();
        assert_eq!(
            seen.len(),
            legend.len(),
            "{name}: a label twice: {legend:?}"
        );
        // Each drawn line has its own colour: the stroke colours of the wide lines differ.
        let strokes = wide_strokes(&cum.svg);
        assert!(
            strokes.len() >= legend.len().min(costed),
            "{name}: {} colours for {} lines",
            strokes.len(),
            legend.len()
        );
        // The recommended option is drawn (by its name, or inside a merged "A = B" label).
        if let Some(rec) = &r.recommendation {
            assert!(
                legend
                    .iter()
                    .any(|l| l.contains(&rec.best.option.to_string())),
                "{name}: {legend:?}"
            );
        }
        let shown_options: usize = legend.iter().map(|l| l.matches(" = ").count() + 1).sum();
        if shown_options < costed {
            assert!(
                cum.caption.contains("left out") && cum.caption.contains("cheapest option of each"),
                "{name}: {}",
                cum.caption
            );
        }
    }
}

/// Distinct stroke colours of the 3-unit-wide lines (the series) of a chart.
fn wide_strokes(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    let mut out: Vec<String> = doc
        .descendants()
        .filter(|n| n.attribute("stroke-width") == Some("3"))
        .filter_map(|n| n.attribute("stroke").map(str::to_string))
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
fn the_breakdown_nets_resale_below_zero_and_its_share_is_of_the_spending() {
    let r = shipped("h100-current-prices");
    let set = render(&r);
    let t = r
        .tiers
        .iter()
        .find(|t| {
            t.options
                .iter()
                .any(|o| o.yearly.iter().any(|y| y.resale_usd > 0.0))
        })
        .expect("h100-current-prices resells hardware");
    let c = chart(
        &set,
        &format!("cost-breakdown-{}", charts::draw::slug(&t.name)),
    );
    assert_has(c, &["resale credit (below zero)"]);
    let o = &t.options[0];
    // Each year's label is its net total; the stack's parts (positive less the credit) net to it.
    for y in &o.yearly {
        assert_has(c, &[&tco_sim::format::usd_compact(y.total_usd)]);
        let parts = y.capex_usd
            + y.maintenance_usd
            + y.energy_usd
            + y.space_usd
            + y.staff_usd
            + y.cloud_usd
            + y.prepaid_usd
            + y.egress_usd
            + y.software_usd
            + y.engineering_usd
            + y.network_usd
            + y.storage_usd
            + y.support_usd;
        assert!(
            (parts - y.resale_usd - y.total_usd).abs() < 0.01,
            "year {}",
            y.year
        );
    }
    // The title's capex share is of the spending before the credit.
    let capex: f64 = o.yearly.iter().map(|y| y.capex_usd).sum();
    let gross: f64 = o.yearly.iter().map(|y| y.total_usd + y.resale_usd).sum();
    let share = tco_sim::format::percent(capex / gross, 0);
    assert!(
        c.title
            .contains(&format!("{share} of the 5-year spending goes to capex")),
        "{} (expected {share})",
        c.title
    );
}

#[test]
fn charts_quote_the_results_figures() {
    for name in ["llama70b-chat", "seed-8xh100", "starter"] {
        let r = with_latency(shipped(name));
        let set = render(&r);
        let s = &r.scenario;
        for t in r.tiers.iter().filter(|t| !t.latency_curve.is_empty()) {
            let lat = chart(&set, &format!("latency-{}", charts::draw::slug(&t.name)));
            let last = t.capacity.last().unwrap();
            // The SLO limit: one computation for the latency title and the capacity chart.
            if let Some(limit) = t.slo_limit_rps(s.slo_percentile, s.slo_latency_s) {
                let v = tco_sim::format::rps(limit);
                let u = tco_sim::format::percent(limit / t.capacity_rps(last), 0);
                let fully = lat.title.contains("at every load simulated");
                assert!(
                    fully || lat.title.contains(&format!("up to {v} ({u} utilization)")),
                    "{name}: {} (expected {v}, {u})",
                    lat.title
                );
                if !t.capacity.is_empty() && r.tiers.len() <= 3 {
                    assert_has(chart(&set, "capacity"), &[&format!("SLO limit {v}")]);
                }
            }
            // The planned fleet at the peak is the fleet table's figure.
            if let Some(l) = &last.latency {
                assert_has(
                    lat,
                    &[&format!(
                        "plan: {} {}",
                        tco_sim::format::percentile(s.slo_percentile),
                        tco_sim::format::duration(l.slo_percentile_s)
                    )],
                );
            }
            // The contract's bound is drawn, in seconds from a second on.
            if let Some(b) = s.slo_latency_s {
                assert_has(lat, &[&format!("≤ {}", tco_sim::format::duration(b))]);
            }
        }
    }
}

#[test]
fn the_slo_label_never_sits_across_the_peak_rule() {
    for (tag, r) in every_shipped() {
        for c in render(&r)
            .charts
            .iter()
            .filter(|c| c.name.starts_with("latency-") && c.name != "latency-cdf")
        {
            let boxes = glyph_boxes(&c.tree);
            let find = |p: &str| boxes.iter().find(|(t, _)| t.starts_with(p)).map(|b| b.1);
            let (Some(slo), Some(peak)) = (find("SLO: "), find("year-")) else {
                continue;
            };
            // The peak label sits 5 units right (or left) of its rule.
            let rule_x = [peak.left() - 5.0, peak.right() + 5.0];
            for x in rule_x {
                let inside_x = slo.left() < x && x < slo.right();
                assert!(
                    !inside_x
                        || (peak.left() - slo.right()).abs() < 12.0
                        || (slo.left() - peak.right()).abs() < 12.0,
                    "{tag}/{}: the SLO label {slo:?} spans the peak rule at x = {x}",
                    c.name
                );
            }
        }
    }
}

#[test]
fn a_wide_range_of_request_rates_gets_a_log_axis() {
    // starter: one NVIDIA L4 carries ten times the traffic.
    let r = shipped("starter");
    let cap = r
        .tiers
        .iter()
        .flat_map(|t| t.capacity.iter().map(move |c| t.capacity_rps(c)))
        .fold(0.0, f64::max);
    let peak = r.tiers[0]
        .capacity
        .iter()
        .map(|c| c.mean_rps)
        .fold(f64::INFINITY, f64::min);
    assert!(cap > 10.0 * peak, "{cap} {peak}");
    let set = render(&r);
    assert_has(
        chart(&set, "capacity"),
        &["Requests/s (log scale)", "1,000"],
    );
    // h100-current-prices: peak traffic and capacity within ten times: linear.
    let set = render(&shipped("h100-current-prices"));
    let texts = svg_texts(chart(&set, "capacity"));
    assert!(texts.iter().all(|t| !t.contains("log scale")), "{texts:?}");
}

#[test]
fn utilization_is_one_figure_in_the_csv_and_the_terminal() {
    let r = with_latency(shipped("seed-8xh100"));
    let csv = tco_sim::report::data::csv(&r);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header
        .iter()
        .position(|h| *h == "utilization_pct")
        .expect("utilization_pct column");
    assert!(header.contains(&"duty_cycle") && !header.contains(&"utilization"));
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let t = &r.tiers[0];
    let want = t.utilization(&t.capacity[0]) * 100.0;
    assert_eq!(row[col], tco_sim::format::fixed(want, 2));
    // Offered load at the design hour over the roofline capacity: 20 req/s of 235 req/s.
    assert!((want - 100.0 * 20.0 / t.unit_throughput_rps).abs() < 1e-9);
    let table = tco_sim::report::table::render(&r);
    assert!(
        table.contains("utilization") && !table.contains(" busy "),
        "{table}"
    );
    assert!(table.contains(&tco_sim::format::percent(want / 100.0, 0)));
}

/// The `points` of every polyline of three or more points: the drawn series (rules, dashes and
/// legend swatches are two-point segments).
fn series_paths(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .filter_map(|n| n.attribute("points"))
        .filter(|p| p.split_whitespace().count() >= 3)
        .map(str::to_string)
        .collect()
}

/// Two tiers of the same hardware under different names: the same capacity, distribution
/// and design day, so every tier chart has a pair of identical series to merge.
const TWINS: &str = r#"name = "report test: two names for one server"
horizon_years = 3

[workload]
preset = "resnet-50"
precision = "int8"

[traffic]
peak_rps = 2000
mean_rps = 1200
growth_per_year = 0.3

[slo]
percentile = 99
latency_ms = 200

[[tier]]
name = "Altra rack A"
profile = "altra-max-m128-30-1u"

[[tier]]
name = "Altra rack B"
profile = "altra-max-m128-30-1u"
"#;

#[test]
fn no_drawn_series_hides_an_identical_one() {
    let mut cases = every_shipped();
    let twins = with_latency(from_toml(TWINS));
    cases.push(("twins".into(), twins.clone()));
    for (tag, r) in cases {
        for c in render(&r).charts {
            let paths = series_paths(&c.svg);
            for (i, a) in paths.iter().enumerate() {
                assert!(
                    !paths[i + 1..].contains(a),
                    "{tag}/{}: two series draw the same line, one hidden under the other \
                     (merge them into one labelled \"A = B\"): {a:.80}",
                    c.name
                );
            }
        }
    }
    // The twins' tier charts draw one line for both, and say so.
    let set = render(&twins);
    for name in ["capacity", "latency-cdf"] {
        let texts = svg_texts(chart(&set, name));
        assert!(
            texts
                .iter()
                .any(|t| t.contains("Altra rack A = Altra rack B")),
            "{name}: {texts:?}"
        );
    }
}

#[test]
fn a_ttft_tpot_contract_gets_its_metrics_against_load_with_the_bounds() {
    let r = with_latency(shipped("azure-trace-llama8b"));
    let (ttft, tpot) = (
        r.scenario.slo_ttft_s.unwrap(),
        r.scenario.slo_tpot_s.unwrap(),
    );
    let set = render(&r);
    let mut seen = 0;
    for t in r.tiers.iter().filter(|t| !t.latency_curve.is_empty()) {
        let name = format!("latency-tokens-{}", charts::draw::slug(&t.name));
        let c = chart(&set, &name);
        seen += 1;
        assert_has(
            c,
            &[
                "SLO: TTFT p99 ≤ 2 s, TPOT p99 ≤ 100 ms",
                "TTFT p99 (left axis)",
                "TPOT p99 (right axis)",
            ],
        );
        // The title's finding is the results' own: the lower of the two limits, and which
        // metric sets it (TTFT crosses first in the fixture's curves).
        let lt = t.limit_rps(|l| l.ttft_s, ttft).unwrap();
        let lp = t.limit_rps(|l| l.tpot_s, tpot).unwrap();
        assert!(lt < lp, "{}: {lt} {lp}", t.name);
        let cap = t.capacity_rps(t.capacity.last().unwrap());
        assert_eq!(
            c.title,
            format!(
                "{}: the contract holds up to {} ({} utilization), where TTFT p99 reaches 2 s",
                t.name,
                tco_sim::format::rps(lt),
                tco_sim::format::percent(lt / cap, 0)
            )
        );
        assert_eq!(
            t.contract_limit_rps(r.scenario.slo_percentile, &r.scenario.bounds()),
            Some(lt)
        );
        // The plan's measured figures are marked.
        let plan = t.capacity.last().unwrap().latency.as_ref().unwrap();
        assert_has(
            c,
            &[
                &format!(
                    "plan: TTFT {}",
                    tco_sim::format::duration(plan.ttft_s.unwrap())
                ),
                &format!(
                    "plan: TPOT {}",
                    tco_sim::format::duration(plan.tpot_s.unwrap())
                ),
            ],
        );
    }
    assert!(seen > 0);
    // An end-to-end contract draws no token chart.
    let e2e = render(&with_latency(shipped("starter")));
    assert!(
        !e2e.charts
            .iter()
            .any(|c| c.name.starts_with("latency-tokens-"))
    );
}
