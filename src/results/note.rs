//! Typed notes of a run: things a reader must know beside the numbers, each variant carrying
//! its data and its remedy (after hyperfine's `src/output/warnings.rs`).
//!
//! `results` builds them while assembling a run; `report` prints them through [`Display`], and
//! `results.json` holds the same sentence (a note serializes as its `Display` text), so the
//! terminal, the PDF and the JSON say the same thing and a test or a report can still match on
//! the variant.

use std::fmt;

use serde::{Serialize, Serializer};

use crate::hardware::DeploymentOption;

/// One note of a run.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// No fleet size of the tier meets the contract (infeasible at any size, capped by
    /// `simulation.max_units`, or unstable), so the tier is not costed.
    TierNotCosted {
        tier: String,
        /// The contract, as [`crate::scenario::Slo::label`] writes it.
        slo: String,
        /// Why, in numbers, from the capacity plan.
        why: String,
    },
    /// A fleet size fixed by the scenario is too small in some years.
    FixedFleetShort {
        tier: String,
        years: Vec<u32>,
        /// What the first short year's fleet gives, from the capacity plan.
        detail: String,
    },
    /// Reservations bought inside the horizon run past its end: owed, but not in the totals.
    CommittedBeyondHorizon {
        tier: String,
        option: DeploymentOption,
        horizon_years: u32,
        /// Owed after the horizon \[USD\].
        owed_usd: f64,
    },
    /// Hybrids whose best reserved base is the whole fleet every year are the reservation
    /// itself, so only the reservation is shown ("tier option" each).
    HybridsShownAsReservation { options: Vec<String> },
    /// A note of the traffic stage (how a trace or series was read), passed on as written.
    Traffic(String),
    /// Inputs whose basis is "estimate" rather than a sourced fact.
    Estimates { count: usize },
    /// An on-prem fleet of one working unit with no spare: one failure stops the service.
    SingleUnitNoSpare { tier: String, years: Vec<u32> },
    /// The ranking figure is after tax (`tax_rate` > 0).
    AfterTax { rate: f64, macrs: bool },
    /// The design traffic held more arrivals than one evaluation may simulate, so each fleet
    /// size was simulated on the busiest stretch of the window that fits (the first such year's
    /// figures).
    WindowShortened {
        tier: String,
        years: Vec<u32>,
        from_s: f64,
        to_s: f64,
        /// Arrivals the full window would have held over all replications.
        arrivals: f64,
        /// The most an evaluation simulates.
        budget: f64,
    },
    /// The design window held too few requests for the percentile, so more replications were
    /// run (the first such year's figures).
    ReplicationsRaised {
        tier: String,
        years: Vec<u32>,
        from: u32,
        to: u32,
        needed: f64,
        percentile: String,
    },
    /// Too few requests for the percentile even at the most replications: sized by the
    /// utilization bound, not simulated (the first such year's figures).
    TooFewRequests {
        tier: String,
        years: Vec<u32>,
        expected: f64,
        needed: f64,
        percentile: String,
    },
    /// A spot option was costed but left out of the recommendation: spot capacity can be taken
    /// back at two minutes' notice, so it is not taken as meeting the contract unless the tier
    /// sets `spot_meets_slo = true`.
    SpotNotRecommended {
        tier: String,
        /// Its net present cost \[USD\], for comparison with the recommendation.
        net_present_cost_usd: f64,
    },
}

impl Note {
    /// What the reader can do about it, when there is something to do.
    pub fn remedy(&self) -> Option<&'static str> {
        match self {
            Note::TierNotCosted { .. } => Some(
                "relax the contract, give the tier a faster profile or precision, or raise simulation.max_units if the search stopped there",
            ),
            Note::FixedFleetShort { .. } => {
                Some("raise the tier's `units`, or remove it so the plan sizes the fleet")
            }
            Note::CommittedBeyondHorizon { .. } => Some(
                "lengthen horizon_years to cover the last commitment, or compare the shorter reservation",
            ),
            Note::HybridsShownAsReservation { .. } | Note::Traffic(_) => None,
            Note::WindowShortened { .. } => Some(
                "shorten simulation.window_s yourself to choose the stretch, or check the traffic is what you meant",
            ),
            Note::ReplicationsRaised { .. } => None,
            Note::TooFewRequests { .. } => Some(
                "lengthen simulation.window_s, or check the traffic: at this rate the contract is set by the service time alone",
            ),
            Note::Estimates { .. } => Some(
                "replace the estimates with your own quotes in [costs] and the profiles, each with its source",
            ),
            Note::SpotNotRecommended { .. } => Some(
                "set spot_meets_slo = true on the tier if its service tolerates interruptions (retries, spare capacity, a fallback to on-demand)",
            ),
            Note::SingleUnitNoSpare { .. } => Some(
                "set the tier's `spares`, or raise costs.availability_target above 0, to keep a spare",
            ),
            Note::AfterTax { .. } => Some("set costs.tax_rate = 0 for the pre-tax comparison"),
        }
    }
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::TierNotCosted { tier, slo, why } => {
                write!(
                    f,
                    "{tier}: no fleet meets {slo}: {why}; the tier is not costed"
                )
            }
            Note::FixedFleetShort {
                tier,
                years,
                detail,
            } => {
                write!(
                    f,
                    "{tier}: year {}: the fixed fleet does not meet the contract ({detail})",
                    join(years)
                )
            }
            Note::CommittedBeyondHorizon {
                tier,
                option,
                horizon_years,
                owed_usd,
            } => write!(
                f,
                "{}: reservations run past year {horizon_years}; {} more is owed after the horizon: outside the cash totals, inside the net present cost the options are ranked on",
                crate::results::decision::choice_label(tier, *option),
                crate::format::usd(*owed_usd)
            ),
            Note::HybridsShownAsReservation { options } => write!(
                f,
                "shown as their reservation, because their best reserved base is the whole fleet every year: {}",
                options.join(", ")
            ),
            Note::Traffic(text) => f.write_str(text),
            Note::WindowShortened {
                tier,
                years,
                from_s,
                to_s,
                arrivals,
                budget,
            } => write!(
                f,
                "{tier}: year {}: the {} s design window holds {} arrivals, more than the {} one evaluation simulates, so each fleet size was simulated on its busiest {} s",
                join(years),
                crate::format::rate(*from_s),
                crate::format::plain(arrivals.round()),
                crate::format::plain(*budget),
                crate::format::rate(*to_s)
            ),
            Note::ReplicationsRaised {
                tier,
                years,
                from,
                to,
                needed,
                percentile,
            } => write!(
                f,
                "{tier}: year {}: {from} replications of the design window hold fewer than the {} requests a {percentile} needs, so {to} were run",
                join(years),
                crate::format::plain(*needed)
            ),
            Note::TooFewRequests {
                tier,
                years,
                expected,
                needed,
                percentile,
            } => write!(
                f,
                "{tier}: year {}: the design window holds about {} requests, fewer than the {} a {percentile} needs, so the fleet is the utilization bound, not simulated (a lone request on an idle unit meets the contract)",
                join(years),
                crate::format::rate(*expected),
                crate::format::plain(*needed)
            ),
            Note::Estimates { count } => write!(
                f,
                "{count} inputs are estimates, not sourced facts; the assumptions in report.pdf and results.json (basis \"estimate\") mark each one"
            ),
            Note::SpotNotRecommended {
                tier,
                net_present_cost_usd,
            } => write!(
                f,
                "{tier} spot: costed (net present cost {}) but not recommended: spot capacity can be reclaimed at short notice, so it is not taken as meeting the contract",
                crate::format::usd(*net_present_cost_usd)
            ),
            Note::SingleUnitNoSpare { tier, years } => write!(
                f,
                "{}: year {}: a single unit carries the load with no spare, so one failure stops the service until it is repaired",
                crate::results::decision::choice_label(
                    tier,
                    crate::hardware::DeploymentOption::OnPrem
                ),
                join(years)
            ),
            Note::AfterTax { rate, macrs } => write!(
                f,
                "costs are after tax: the options are ranked on the net present cost after a {} tax rate, with hardware depreciated {} for tax and sales taxed on their gain over tax book value",
                crate::format::percent(*rate, 1),
                if *macrs {
                    "by MACRS 5-year"
                } else {
                    "straight-line over depreciation_years"
                }
            ),
        }
    }
}

/// Years as a list: "4, 5".
fn join(years: &[u32]) -> String {
    let years: Vec<String> = years.iter().map(u32::to_string).collect();
    years.join(", ")
}

/// A note is its sentence in `results.json` (schema 1 has a list of strings).
impl Serialize for Note {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_read_and_serialize_as_their_sentence() {
        let n = Note::FixedFleetShort {
            tier: "gpu".into(),
            years: vec![4, 5],
            detail: "3 units give p99 = 250 ms".into(),
        };
        let text = "gpu: year 4, 5: the fixed fleet does not meet the contract (3 units give p99 = 250 ms)";
        assert_eq!(n.to_string(), text);
        assert_eq!(serde_json::to_string(&n).unwrap(), format!("\"{text}\""));
        assert!(n.remedy().unwrap().contains("units"));
        let e = Note::Estimates { count: 3 };
        assert!(e.to_string().starts_with("3 inputs are estimates"));
        assert_eq!(Note::Traffic("as read".into()).remedy(), None);
    }
}
