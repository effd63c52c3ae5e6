//! The decision as a reader acts on it: what to call the chosen option, whether a fleet meets
//! its contract with room to spare or only marginally, the commitment the recommendation
//! implies, how sure it is, the three risks that matter most, and the inputs whose sources are
//! flagged as outliers or stale. The terminal and the PDF's first page both call these
//! functions, so they say the same thing from one computation.

use serde::Serialize;

use super::{Choice, RunResults, TierResult};
use crate::capacity::CapacityYear;
use crate::cite::Basis;
use crate::format;
use crate::hardware::DeploymentOption;
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

/// The status of one year's planned fleet against an end-to-end bound `latency_bound_s`.
pub fn year_status(c: &CapacityYear, latency_bound_s: Option<f64>) -> SloStatus {
    if !c.stop.meets_slo() {
        return SloStatus::NotMet;
    }
    match (&c.latency, latency_bound_s) {
        (Some(l), Some(b)) => match l.slo_ci95_s {
            Some(h) if h > 0.0 && l.slo_percentile_s + h > b => SloStatus::Marginal,
            _ => SloStatus::Met,
        },
        _ => SloStatus::Met,
    }
}

/// The worst year's status of a tier: the verdict every report shows.
pub fn tier_status(t: &TierResult, latency_bound_s: Option<f64>) -> SloStatus {
    if !t.meets_slo() {
        return SloStatus::NotMet;
    }
    t.capacity
        .iter()
        .map(|c| year_status(c, latency_bound_s))
        .max()
        .unwrap_or(SloStatus::Met)
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

/// The risks to the recommendation a reader should weigh first, most important first, at most
/// three: the nearest flip points, a recommended on-prem fleet of one server with no spare, a
/// marginal pass of the contract, the estimated inputs with the widest tornado swing, and
/// inputs flagged OUTLIER or STALE.
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
        && tier_status(t, r.scenario.slo_latency_s) == SloStatus::Marginal
    {
        out.push(format!(
            "{} meets {} only marginally: the 95 % confidence interval of its tail latency \
             crosses the bound.",
            t.name, r.scenario.slo
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
        let est: Vec<String> = s
            .tornado
            .iter()
            .filter(|t| is_estimate(r, &t.input) && t.swing_usd > 0.0)
            .take(2)
            .map(|t| format!("{} (swing {})", t.input, format::usd(t.swing_usd)))
            .collect();
        if !est.is_empty() {
            out.push(format!(
                "Estimated inputs that move the answer most: {}; replace them with quotes.",
                est.join(", ")
            ));
        }
    }
    out.truncate(3);
    out
}

/// Whether the tornado input `path` ("costs.pue", "tier.h100.price.purchase_usd") is an
/// estimate in the run's inputs.
fn is_estimate(r: &RunResults, path: &str) -> bool {
    r.inputs.iter().any(|i| {
        i.basis == Basis::Estimate && {
            let field = i.field.split(" [").next().unwrap_or(&i.field);
            path.ends_with(field) && (path.contains(&i.scope) || i.scope == "costs")
        }
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

    #[test]
    fn reservation_types() {
        assert_eq!(reservation_type(0.0), "no upfront");
        assert_eq!(reservation_type(1.0), "all upfront");
        assert_eq!(reservation_type(0.5), "partial upfront (50 % paid upfront)");
    }
}
