//! The decision as a reader acts on it: what to call the chosen option, whether a fleet meets
//! its contract with room to spare or only marginally, the commitment the recommendation
//! implies, how sure it is, the three risks that matter most, and the inputs whose sources are
//! flagged as outliers or stale. The terminal and the PDF's first page both call these
//! functions, so they say the same thing from one computation.

use serde::Serialize;

use super::{Choice, RunResults, TierResult};
use crate::capacity::{CapacityYear, LatencyAtPlan};
use crate::cite::Basis;
use crate::format;
use crate::hardware::DeploymentOption;
use crate::hardware::numbers::PROFILE_NUMBERS;
use crate::scenario::InputRecord;

/// "AWS p5.48xlarge reserved-3y", and "8x H100 on-prem" (not "8x H100 on-prem on-prem") when
/// the tier's name already says the option.
pub fn choice_label(tier: &str, option: DeploymentOption) -> String {
    let o = option.label();
    let words: Vec<String> = tier
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',')
        .map(str::to_lowercase)
        .collect();
    if words.iter().any(|w| w == o) {
        tier.to_string()
    } else {
        format!("{tier} {o}")
    }
}

/// A choice as [`choice_label`] writes it.
pub fn label_of(c: &Choice) -> String {
    choice_label(&c.tier, c.option)
}

/// Whether a planned fleet meets its contract: a pass whose 95 % confidence interval crosses
/// the bound is marginal (the measured percentile is below the bound, but not surely).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SloStatus {
    Met,
    Marginal,
    NotMet,
}

impl SloStatus {
    /// "yes", "marginal", "no": the "meets SLO" cell.
    pub fn label(self) -> &'static str {
        match self {
            SloStatus::Met => "yes",
            SloStatus::Marginal => "marginal",
            SloStatus::NotMet => "no",
        }
    }
}

/// The bounds the contract puts on its percentile \[s\]: end-to-end latency, time to first
/// token, time per output token (any may be absent; a scenario has at least one).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Bounds {
    pub latency_s: Option<f64>,
    pub ttft_s: Option<f64>,
    pub tpot_s: Option<f64>,
}

impl Bounds {
    /// A contract on end-to-end latency alone.
    pub fn latency(bound_s: f64) -> Bounds {
        Bounds {
            latency_s: Some(bound_s),
            ..Bounds::default()
        }
    }
}

/// A latency metric a contract can bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    EndToEnd,
    Ttft,
    Tpot,
}

impl Metric {
    pub const ALL: [Metric; 3] = [Metric::EndToEnd, Metric::Ttft, Metric::Tpot];

    /// "end-to-end latency", "TTFT", "TPOT".
    pub fn name(self) -> &'static str {
        match self {
            Metric::EndToEnd => "end-to-end latency",
            Metric::Ttft => "TTFT",
            Metric::Tpot => "TPOT",
        }
    }

    /// The contract's bound on this metric \[s\].
    pub fn bound(self, b: &Bounds) -> Option<f64> {
        match self {
            Metric::EndToEnd => b.latency_s,
            Metric::Ttft => b.ttft_s,
            Metric::Tpot => b.tpot_s,
        }
    }

    /// The metric at the contract's percentile at plan, with the half-width of its 95 %
    /// confidence interval \[s\]; `None` when the run did not measure it.
    pub fn at_plan(self, l: &LatencyAtPlan) -> Option<(f64, Option<f64>)> {
        match self {
            Metric::EndToEnd => Some((l.slo_percentile_s, l.slo_ci95_s)),
            Metric::Ttft => l.ttft_s.map(|v| (v, l.ttft_ci95_s)),
            Metric::Tpot => l.tpot_s.map(|v| (v, l.tpot_ci95_s)),
        }
    }
}

/// One measured value against its bound: over it is not met; within it, but with a 95 %
/// confidence interval (half-width `ci95`) that reaches past it, marginal. A zero or missing
/// half-width (one replication, a trace replayed identically) is no interval: judged on the
/// value alone.
pub fn bound_status(value_s: f64, ci95_s: Option<f64>, bound_s: f64) -> SloStatus {
    if value_s > bound_s {
        SloStatus::NotMet
    } else {
        match ci95_s {
            Some(h) if h > 0.0 && value_s + h > bound_s => SloStatus::Marginal,
            _ => SloStatus::Met,
        }
    }
}

/// The status of one year's planned fleet against every bound of the contract: not met when
/// the search did not stop at a fleet that meets it, else the worst metric's
/// [`bound_status`] (a run that did not measure a metric is judged by its search alone).
pub fn year_status(c: &CapacityYear, bounds: &Bounds) -> SloStatus {
    if !c.stop.meets_slo() {
        return SloStatus::NotMet;
    }
    let Some(l) = &c.latency else {
        return SloStatus::Met;
    };
    Metric::ALL
        .iter()
        .filter_map(|m| {
            let b = m.bound(bounds)?;
            let (v, h) = m.at_plan(l)?;
            // The search judged the fleet; an interval can only make its pass marginal.
            Some(bound_status(v, h, b).min(SloStatus::Marginal))
        })
        .max()
        .unwrap_or(SloStatus::Met)
}

/// The worst year's status of a tier: the verdict every report shows.
pub fn tier_status(t: &TierResult, bounds: &Bounds) -> SloStatus {
    if !t.meets_slo() {
        return SloStatus::NotMet;
    }
    t.capacity
        .iter()
        .map(|c| year_status(c, bounds))
        .max()
        .unwrap_or(SloStatus::Met)
}

/// The contracted metrics whose interval crosses their bound in some year of the tier, in
/// contract order ("TPOT"): what a marginal verdict is about.
pub fn marginal_metrics(t: &TierResult, bounds: &Bounds) -> Vec<Metric> {
    Metric::ALL
        .into_iter()
        .filter(|m| {
            m.bound(bounds).is_some_and(|b| {
                t.capacity.iter().any(|c| {
                    c.stop.meets_slo()
                        && c.latency
                            .as_ref()
                            .and_then(|l| m.at_plan(l))
                            .is_some_and(|(v, h)| bound_status(v, h, b) == SloStatus::Marginal)
                })
            })
        })
        .collect()
}

/// A flag an input's note raises: "OUTLIER" or "STALE" written in it (in capitals, as the
/// profiles' authors mark a figure they kept though it is far from others or old).
pub fn input_flag(i: &InputRecord) -> Option<&'static str> {
    let note = i.note.as_deref().unwrap_or("");
    let source = i.source.as_str();
    ["OUTLIER", "STALE"]
        .into_iter()
        .find(|f| note.contains(f) || source.contains(f))
}

/// Every input with a flag, with the flag.
pub fn flagged_inputs(r: &RunResults) -> Vec<(&InputRecord, &'static str)> {
    r.inputs
        .iter()
        .filter_map(|i| input_flag(i).map(|f| (i, f)))
        .collect()
}

/// What signing for the recommendation commits to.
#[derive(Debug, Clone, PartialEq)]
pub struct Commitment {
    /// Cash paid in the first year before any use: on-prem's purchase and installation, a
    /// reservation's upfront share \[USD\].
    pub upfront_usd: f64,
    /// "hardware owned; replaced after 5 years, resale $74,259 at year 5", "1-year
    /// reservations, partial upfront (50 %), renewed each year", "none: paid by the hour".
    pub term: String,
    /// Reservation payments still owed after the horizon \[USD\].
    pub owed_after_horizon_usd: f64,
}

/// The commitment of the recommended option, if there is one.
pub fn commitment(r: &RunResults) -> Option<Commitment> {
    let rec = r.recommendation.as_ref()?;
    let o = r
        .tiers
        .iter()
        .find(|t| t.name == rec.best.tier)?
        .options
        .iter()
        .find(|o| o.option == rec.best.option)?;
    let first = o.yearly.first();
    let c = &r.scenario.costs;
    let years = r.scenario.horizon_years;
    let (upfront_usd, term) = match o.option {
        DeploymentOption::OnPrem => (
            first.map_or(0.0, |y| y.capex_usd),
            format!(
                "hardware owned, refreshed after {} years{}",
                format::trim(c.refresh_years.value),
                if o.resale_value_usd > 0.0 {
                    format!(
                        "; resale {} at year {years}",
                        format::usd(o.resale_value_usd)
                    )
                } else {
                    String::new()
                }
            ),
        ),
        DeploymentOption::OnDemand | DeploymentOption::Spot => {
            (0.0, "none: paid by the instance-hour used".into())
        }
        opt => {
            let t = opt.term_years().unwrap_or(1);
            (
                first.map_or(0.0, |y| y.prepaid_usd),
                format!(
                    "{t}-year reservations ({}), bought as the fleet grows{}",
                    reservation_type(c.reserved_upfront_share.value),
                    if matches!(opt, DeploymentOption::Hybrid1y | DeploymentOption::Hybrid3y) {
                        ", with on-demand above the reserved base"
                    } else {
                        ""
                    }
                ),
            )
        }
    };
    Some(Commitment {
        upfront_usd,
        term,
        owed_after_horizon_usd: o.committed_beyond_horizon_usd,
    })
}

/// "no upfront", "partial upfront (50 %)", "all upfront".
pub fn reservation_type(share: f64) -> String {
    if share <= 0.0 {
        "no upfront".into()
    } else if share >= 1.0 {
        "all upfront".into()
    } else {
        format!(
            "partial upfront ({} paid upfront)",
            format::percent_short(share, 1)
        )
    }
}

/// Where the recommended option's price comes from, briefly: its date and region, and for a
/// cloud option the reservation type priced; the source itself is in the assumptions table.
pub fn price_basis(r: &RunResults) -> Option<String> {
    let rec = r.recommendation.as_ref()?;
    let t = r.tiers.iter().find(|t| t.name == rec.best.tier)?;
    let field = match rec.best.option {
        DeploymentOption::OnPrem => "price.purchase_usd",
        DeploymentOption::OnDemand | DeploymentOption::Hybrid1y | DeploymentOption::Hybrid3y => {
            "price.on_demand_usd_per_hour"
        }
        DeploymentOption::Reserved1y => "price.reserved_1y_usd_per_hour",
        DeploymentOption::Reserved3y => "price.reserved_3y_usd_per_hour",
        DeploymentOption::Spot => "price.spot_usd_per_hour",
    };
    let input = r
        .inputs
        .iter()
        .find(|i| i.scope == t.profile && i.field.starts_with(field));
    let mut parts = vec![];
    if let Some(i) = input {
        parts.push(format!(
            "{} price dated {}",
            rec.best.option,
            if i.date.is_empty() {
                "(undated)"
            } else {
                &i.date
            }
        ));
    }
    if let Some(region) = &t.price_region {
        parts.push(format!("region {region}"));
    }
    if rec.best.option.term_years().is_some() {
        parts.push(format!(
            "reservations {}",
            reservation_type(r.scenario.costs.reserved_upfront_share.value)
        ));
    }
    if input.is_some() {
        // Brief on page 1: the source's full title and note are in the assumptions table.
        parts.push("source in the assumptions (appendix A)".into());
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// How sure the recommendation is: the probability it is cheapest over the Monte Carlo
/// samples and the nearest flip point. `None` when the analysis did not run.
pub fn how_sure(r: &RunResults) -> Option<String> {
    let rec = r.recommendation.as_ref()?;
    let u = r.uncertainty.as_ref()?;
    let o = u
        .options
        .iter()
        .find(|o| o.tier == rec.best.tier && o.option == rec.best.option)?;
    let s = format!(
        "{}; {}",
        crate::uncertainty::chance_text(o.p_cheapest, u.samples),
        crate::uncertainty::flip_text(r.sensitivity.as_ref())
    );
    let mut s = s;
    if let Some(first) = s.get(..1) {
        s = first.to_uppercase() + &s[1..];
    }
    Some(format!("{s}."))
}

/// Flip points that flip, nearest the base first (by relative change).
fn nearest_flips(r: &RunResults) -> Vec<&crate::uncertainty::FlipPoint> {
    r.sensitivity
        .as_ref()
        .map_or(vec![], crate::uncertainty::flips_nearest_first)
}

/// Below this share of Monte Carlo samples in which the recommended fleet still meets the
/// contract, page one names the shortfall as a risk (a one-in-twenty chance, the usual 5 %
/// level).
pub const SLO_RISK_P: f64 = 0.95;

/// Page one names a fitted performance constant as a risk only when its tornado swing is at
/// least this share of the recommendation's margin over the runner-up: a constant that moves a
/// $500,000 margin by $5,000 is not what a reader should weigh first.
pub const FIT_RISK_SHARE: f64 = 0.1;

/// The risks to the recommendation a reader should weigh first, most important first, at most
/// three: the nearest flip points, a recommended on-prem fleet of one server with no spare, a
/// marginal pass of the contract, a recommended fleet that misses the contract in more than
/// 1 − [`SLO_RISK_P`] of the samples, inputs flagged OUTLIER or STALE, the estimated inputs
/// with the widest tornado swing, and the fitted performance constants with the widest when it
/// is at least [`FIT_RISK_SHARE`] of the margin.
pub fn top_risks(r: &RunResults) -> Vec<String> {
    let Some(rec) = r.recommendation.as_ref() else {
        return vec![];
    };
    let mut out = vec![];
    if let Some(f) = nearest_flips(r).first() {
        out.push(format!(
            "The answer changes if {} moves from {} to {}: it {}.",
            f.input,
            format::figures3(f.base_value),
            f.value.map_or(format::MISSING.into(), format::figures3),
            f.verdict
        ));
    }
    if r.notes
        .iter()
        .any(|n| matches!(n, super::Note::SingleUnitNoSpare { tier, .. } if *tier == rec.best.tier))
        && rec.best.option == DeploymentOption::OnPrem
    {
        out.push(format!(
            "{} runs on a single server with no spare: one failure stops the service until it \
             is repaired.",
            rec.best.tier
        ));
    }
    if let Some(t) = r.tiers.iter().find(|t| t.name == rec.best.tier)
        && tier_status(t, &r.scenario.bounds()) == SloStatus::Marginal
    {
        let what: Vec<&str> = marginal_metrics(t, &r.scenario.bounds())
            .into_iter()
            .map(|m| match m {
                Metric::EndToEnd => "its tail latency",
                Metric::Ttft => "its TTFT",
                Metric::Tpot => "its TPOT",
            })
            .collect();
        out.push(format!(
            "{} meets {} only marginally: the 95 % confidence interval of {} crosses the \
             bound.",
            t.name,
            r.scenario.slo,
            if what.is_empty() {
                "its tail latency".to_string()
            } else {
                what.join(" and of ")
            }
        ));
    }
    if let Some(p) = r
        .uncertainty
        .as_ref()
        .and_then(|u| {
            u.options
                .iter()
                .find(|o| o.tier == rec.best.tier && o.option == rec.best.option)
        })
        .and_then(|o| o.p_slo_met)
        .filter(|p| *p < SLO_RISK_P)
    {
        out.push(format!(
            "In {} of the Monte Carlo samples the planned {} fleet misses the contract (its \
             performance inputs drawn across their ranges): plan headroom, or measure the model \
             on the hardware (tco-sim calibrate --from) to narrow them.",
            format::percent(1.0 - p, 1),
            rec.best.tier
        ));
    }
    let flagged = flagged_inputs(r);
    if !flagged.is_empty() {
        let names: Vec<String> = flagged
            .iter()
            .take(3)
            .map(|(i, f)| format!("{} · {} ({f})", i.scope, i.field))
            .collect();
        out.push(format!(
            "{} input{} flagged by {} source as outlier or stale: {}{}.",
            flagged.len(),
            if flagged.len() == 1 { " is" } else { "s are" },
            if flagged.len() == 1 { "its" } else { "their" },
            names.join("; "),
            if flagged.len() > 3 { "; …" } else { "" }
        ));
    }
    if let Some(s) = &r.sensitivity {
        let widest = |basis: Basis, least_usd: f64| -> Vec<String> {
            s.tornado
                .iter()
                .filter(|t| {
                    has_basis(r, &t.input, basis) && t.swing_usd > 0.0 && t.swing_usd >= least_usd
                })
                .take(2)
                .map(|t| format!("{} (swing {})", t.input, format::usd(t.swing_usd)))
                .collect()
        };
        let est = widest(Basis::Estimate, 0.0);
        if !est.is_empty() {
            out.push(format!(
                "Estimated inputs that move the answer most: {}; replace them with quotes or \
                 measurements.",
                est.join(", ")
            ));
        }
        // A fitted constant is named only when its swing is a material share of the margin.
        let fit = widest(
            Basis::Fit,
            FIT_RISK_SHARE * rec.margin_usd.unwrap_or(0.0).abs(),
        );
        if !fit.is_empty() {
            out.push(format!(
                "Performance constants fitted to published benchmarks that move the answer \
                 most: {}; measure your model on the hardware (tco-sim calibrate --from).",
                fit.join(", ")
            ));
        }
    }
    out.truncate(3);
    out
}

/// Whether the tornado input `path` ("costs.pue", "tier.h100.price.purchase_usd") has `basis`
/// in the run's inputs. A profile number is recorded under its profile's name by its label
/// (`tier.h100.interconnect.allreduce_latency_us` is `hgx-h100-8x` ·
/// `interconnect.allreduce_latency [s]`), a tier's own setting under the tier's name, the rest
/// under `costs` or `workload`.
fn has_basis(r: &RunResults, path: &str, basis: Basis) -> bool {
    let mut wanted: Vec<(&str, &str)> = vec![];
    if let Some(rest) = path.strip_prefix("tier.") {
        for t in &r.tiers {
            if let Some(key) = rest
                .strip_prefix(t.name.as_str())
                .and_then(|k| k.strip_prefix('.'))
            {
                let label = PROFILE_NUMBERS
                    .iter()
                    .find(|n| n.key == key)
                    .map_or(key, |n| n.label);
                wanted.push((t.profile.as_str(), label));
                wanted.push((t.name.as_str(), key));
            }
        }
    } else if let Some(scoped) = path.split_once('.') {
        wanted.push(scoped);
    }
    r.inputs.iter().any(|i| {
        i.basis == basis
            && wanted
                .iter()
                .any(|&(scope, field)| i.scope == scope && i.field == field)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_is_not_said_twice() {
        assert_eq!(
            choice_label("8x H100 on-prem", DeploymentOption::OnPrem),
            "8x H100 on-prem"
        );
        assert_eq!(
            choice_label("On-prem 8x H100 (seed price)", DeploymentOption::OnPrem),
            "On-prem 8x H100 (seed price)"
        );
        assert_eq!(
            choice_label("AWS p5.48xlarge", DeploymentOption::Reserved3y),
            "AWS p5.48xlarge reserved-3y"
        );
    }

    fn year_with(tpot_s: f64, tpot_ci95_s: Option<f64>) -> CapacityYear {
        CapacityYear {
            year: 1,
            peak_rps: 1.0,
            mean_rps: 1.0,
            units: 1,
            analytic_units: 1,
            stop: crate::capacity::StopReason::Met,
            detail: None,
            latency: Some(LatencyAtPlan {
                p50_s: 1.0,
                p95_s: 2.0,
                p99_s: 3.0,
                slo_percentile_s: 3.0,
                slo_ci95_s: Some(0.1),
                utilization: 0.5,
                ttft_s: Some(0.5),
                tpot_s: Some(tpot_s),
                ttft_ci95_s: Some(0.01),
                tpot_ci95_s,
                llm: None,
                prefix_hit_rate: None,
                little_relative_error: 0.0,
                cdf: vec![],
            }),
            fleet: crate::capacity::FleetYear {
                year: 1,
                units: 1,
                utilization: 0.5,
                hourly_units: vec![],
                requests: 0.0,
            },
        }
    }

    #[test]
    fn a_tpot_whose_interval_crosses_its_bound_is_marginal() {
        let contract = Bounds {
            latency_s: None,
            ttft_s: Some(2.0),
            tpot_s: Some(0.100),
        };
        // 99.7 ms ± 0.5 ms against 100 ms: within, but not surely.
        assert_eq!(
            year_status(&year_with(0.0997, Some(0.0005)), &contract),
            SloStatus::Marginal
        );
        // The same value with an interval that stays below the bound, or with none (a trace
        // replayed identically gives a zero half-width), passes.
        assert_eq!(
            year_status(&year_with(0.0997, Some(0.0002)), &contract),
            SloStatus::Met
        );
        assert_eq!(
            year_status(&year_with(0.0997, Some(0.0)), &contract),
            SloStatus::Met
        );
        assert_eq!(
            year_status(&year_with(0.0997, None), &contract),
            SloStatus::Met
        );
        // The end-to-end interval (3 s ± 0.1 s) is not judged when the contract has no
        // end-to-end bound; with a 3.05 s bound it makes the year marginal too.
        let e2e = Bounds::latency(3.05);
        assert_eq!(
            year_status(&year_with(0.05, None), &e2e),
            SloStatus::Marginal
        );
        assert_eq!(
            year_status(&year_with(0.05, None), &Bounds::latency(4.0)),
            SloStatus::Met
        );
    }

    #[test]
    fn bound_status_reads_the_value_and_its_interval() {
        assert_eq!(bound_status(0.101, None, 0.1), SloStatus::NotMet);
        assert_eq!(bound_status(0.099, Some(0.002), 0.1), SloStatus::Marginal);
        assert_eq!(bound_status(0.099, Some(0.0005), 0.1), SloStatus::Met);
    }

    #[test]
    fn reservation_types() {
        assert_eq!(reservation_type(0.0), "no upfront");
        assert_eq!(reservation_type(1.0), "all upfront");
        assert_eq!(reservation_type(0.5), "partial upfront (50 % paid upfront)");
    }
}
