//! The sweep's only contact with the planning pipeline: validate a point's scenario, plan and cost
//! it, and keep the figures a sweep row holds. When the pipeline's entry points move, [`pipeline`]
//! (and the field reads in `rows`) are all that change.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::input::{InputError, SourceFile};

/// What a sweep needs to know of a valid point before running it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Facts {
    pub seed: u64,
    pub horizon_years: u32,
}

/// How far to take a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Validate only.
    Validate,
    /// Plan and cost: with the analytic utilization bound, or by simulation.
    Plan { analytic: bool },
}

/// One tier × option of one point: the figures a sweep row holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TierRow {
    pub tier: String,
    pub profile: String,
    /// The deployment option; absent for a tier that is not costed (no fleet meets the SLO).
    pub option: Option<String>,
    /// Units installed, committed or at the peak, per year of the horizon.
    pub units: Vec<u32>,
    /// The contract's percentile, e.g. 99.
    pub slo_percentile: f64,
    /// That percentile of latency at the planned fleet in its worst year \[s\]; absent when the
    /// fleet was sized analytically.
    pub slo_latency_s: Option<f64>,
    pub total_usd: Option<f64>,
    pub npv_usd: Option<f64>,
    /// NPV net of residual hardware value: the figure options are ranked on.
    pub net_present_cost_usd: Option<f64>,
    pub cost_per_million_usd: Option<f64>,
    pub meets_slo: bool,
    pub recommended: bool,
    /// Why no fleet of this tier meets the contract, when none does.
    pub infeasible: Option<String>,
}

/// Run one point's scenario text through the pipeline up to `stage`. Bad input comes back as an
/// [`InputError`] (inside the `anyhow::Error`), so the sweep can point at the axis that caused it.
pub fn pipeline(src: &SourceFile, stage: Stage) -> Result<(Facts, Vec<TierRow>)> {
    let scenario = crate::scenario::Scenario::from_source(src)?;
    let facts = Facts {
        seed: scenario.seed,
        horizon_years: scenario.horizon_years,
    };
    let results = match stage {
        Stage::Validate => return Ok((facts, vec![])),
        Stage::Plan { analytic: true } => {
            crate::results::plan(&scenario, crate::results::Method::Analytic, &|_, _| {})?
        }
        Stage::Plan { analytic: false } => crate::results::plan(
            &scenario,
            crate::results::Method::Simulated {
                replications: scenario.simulation.replications,
            },
            &|_, _| {},
        )?,
    };
    Ok((facts, rows(&results)))
}

/// Validate a point; the error is the scenario's own located [`InputError`].
pub fn validate(src: &SourceFile) -> Result<Facts, InputError> {
    match pipeline(src, Stage::Validate) {
        Ok((facts, _)) => Ok(facts),
        Err(e) => Err(match e.downcast::<InputError>() {
            Ok(input) => input,
            Err(other) => InputError::new(format!("{other:#}")).in_file(src.name.clone()),
        }),
    }
}

/// The sweep's rows of one run: every tier × option in the run's order, and one row without an
/// option for a tier that is not costed, so an infeasible tier still shows in the table.
fn rows(r: &crate::results::RunResults) -> Vec<TierRow> {
    let best = r.recommendation.as_ref().map(|x| &x.best);
    let finite = |x: f64| x.is_finite().then_some(x);
    let mut out = Vec::new();
    for t in &r.tiers {
        let slo_latency_s = t
            .capacity
            .iter()
            .filter_map(|c| c.latency.as_ref().map(|l| l.slo_percentile_s))
            .reduce(f64::max);
        let base = TierRow {
            tier: t.name.clone(),
            profile: t.profile.clone(),
            option: None,
            units: vec![],
            slo_percentile: r.scenario.slo_percentile,
            slo_latency_s,
            total_usd: None,
            npv_usd: None,
            net_present_cost_usd: None,
            cost_per_million_usd: None,
            meets_slo: t.meets_slo(),
            recommended: false,
            infeasible: t.infeasible.clone(),
        };
        if t.options.is_empty() {
            out.push(TierRow {
                meets_slo: false,
                ..base
            });
            continue;
        }
        for o in &t.options {
            out.push(TierRow {
                option: Some(o.option.label().to_string()),
                units: o.yearly.iter().map(|y| y.units).collect(),
                total_usd: finite(o.total_usd),
                npv_usd: finite(o.npv_usd),
                net_present_cost_usd: finite(o.net_present_cost_usd),
                cost_per_million_usd: o.cost_per_million_usd.and_then(finite),
                recommended: best.is_some_and(|b| b.tier == t.name && b.option == o.option),
                ..base.clone()
            });
        }
    }
    out
}
