//! The cost assumptions, each declared once: its scenario key, unit, valid range, cited default
//! and what it means. Stage 3 of the pipeline: scenario validation reads these declarations, the
//! cost formulas ([`crate::cost`]) later read the validated [`CostInputs`].
//!
//! The `cost_inputs!` table below generates [`CostInputs`] (one [`Cited`] field per assumption,
//! so a formula writes `c.pue.value`), its cited defaults, [`CostInputs::fields`] in declaration
//! order (the order of `results.json` `inputs` and of the report's assumptions page), mutable
//! access by key for validation, and [`COST_INPUTS`], the static list from which the `[costs]`
//! table is parsed and checked and the table in `docs/scenario-format.md` is written
//! ([`docs_table`]). Adding an assumption is one entry here and its use in a formula.

use serde::Serialize;

use crate::cite::{Basis, Cited, Source};
use crate::hardware::numbers::Valid;
use crate::uncertainty::ranges::DeclaredRange;

/// Where a default comes from, as static text (turned into a [`Source`] when used).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DefaultSource {
    pub key: &'static str,
    pub title: &'static str,
    /// Empty when the source has no address.
    pub url: &'static str,
    /// `YYYY`, `YYYY-MM` or `YYYY-MM-DD`.
    pub date: &'static str,
}

/// A cited default value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CitedDefault {
    pub value: f64,
    /// `Cited`, `Derived` (the arithmetic in the note) or `Estimate`.
    pub basis: Basis,
    pub source: DefaultSource,
    pub note: Option<&'static str>,
}

impl CitedDefault {
    /// The default as the report carries it.
    pub fn cited(&self) -> Cited {
        let s = &self.source;
        Cited {
            log_sd: None,
            value: self.value,
            basis: self.basis,
            source: Source {
                key: s.key.into(),
                title: s.title.into(),
                url: (!s.url.is_empty()).then(|| s.url.into()),
                date: s.date.into(),
            },
            note: self.note.map(String::from),
        }
    }
}

/// One cost assumption: everything parsing, validation, defaults, reports and docs need.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostInput {
    /// The key under `[costs]` in a scenario, and the field of [`CostInputs`].
    pub key: &'static str,
    pub unit: &'static str,
    pub valid: Valid,
    pub default: CitedDefault,
    /// What it means, for the docs.
    pub help: &'static str,
    /// Its own default uncertainty, where a source gives one; without it an estimate gets the
    /// general rule of [`crate::uncertainty::ranges`].
    pub range: Option<DeclaredRange>,
}

macro_rules! cost_inputs {
    (@range) => { None };
    (@range $range:expr) => { Some($range) };
    ($(
        $key:ident {
            unit: $unit:literal,
            valid: $valid:expr,
            default: $value:literal, $basis:ident,
            source: [$skey:literal, $title:literal, $url:literal, $date:literal],
            note: $note:expr,
            help: $help:literal
            $(, range: $range:expr)? $(,)?
        }
    ),+ $(,)?) => {
        /// Cost assumptions, each cited (a default's source, or the scenario line that set it).
        #[derive(Debug, Clone, PartialEq, Serialize)]
        pub struct CostInputs {
            $(
                #[doc = $help]
                #[doc = concat!(" \\[", $unit, "\\]")]
                pub $key: Cited,
            )+
        }

        /// Every cost assumption, in declaration order.
        pub static COST_INPUTS: &[CostInput] = &[$(
            CostInput {
                key: stringify!($key),
                unit: $unit,
                valid: $valid,
                default: CitedDefault {
                    value: $value,
                    basis: Basis::$basis,
                    source: DefaultSource { key: $skey, title: $title, url: $url, date: $date },
                    note: $note,
                },
                help: $help,
                range: cost_inputs!(@range $($range)?),
            },
        )+];

        impl CostInputs {
            /// How many assumptions there are.
            pub const COUNT: usize = [$(stringify!($key)),+].len();

            /// Every assumption with its scenario key, in declaration order.
            pub fn fields(&self) -> [(&'static str, &Cited); Self::COUNT] {
                [$((stringify!($key), &self.$key)),+]
            }

            /// The assumption with this scenario key.
            pub fn get_mut(&mut self, key: &str) -> Option<&mut Cited> {
                match key {
                    $(stringify!($key) => Some(&mut self.$key),)+
                    _ => None,
                }
            }
        }

        impl Default for CostInputs {
            /// Every assumption at its cited default.
            fn default() -> Self {
                CostInputs {
                    $($key: CitedDefault {
                        value: $value,
                        basis: Basis::$basis,
                        source: DefaultSource { key: $skey, title: $title, url: $url, date: $date },
                        note: $note,
                    }
                    .cited(),)+
                }
            }
        }
    };
}

// The defaults and their sources: `reference/hardware.md` §6.
cost_inputs! {
    electricity_usd_per_kwh {
        unit: "USD/kWh",
        valid: Valid::from_to(0.0, 10.0, "USD per kWh from 0 to 10"),
        default: 0.081, Cited,
        source: [
            "eia-2023",
            "EIA Electric Power Annual 2023: US average industrial price 8.06 ¢/kWh (via Statista)",
            "https://www.eia.gov/electricity/annual/",
            "2024-10-17"
        ],
        note: Some("industrial rate; state averages range 6.4 ¢ (WA) to 18.6 ¢ (CA)"),
        help: "price of electricity for on-prem units (at most 10: the dearest retail rates in Europe peaked near $1/kWh in 2022, ×10)",
    },
    pue {
        unit: "ratio",
        valid: Valid::from_to(1.0, 5.0, "a PUE from 1.0 to 5.0 (typical 1.1–2.0)"),
        default: 1.56, Cited,
        source: [
            "uptime-2024",
            "Uptime Institute, 'Large data centers are mostly more efficient' (global average PUE 1.56–1.58)",
            "https://journal.uptimeinstitute.com/",
            "2024-02-07"
        ],
        note: Some("enterprise/colocation average; new large builds ~1.3"),
        help: "power usage effectiveness: facility power per watt of IT load",
    },
    colocation_usd_per_kw_month {
        unit: "USD/kW-month",
        valid: Valid::from_to(0.0, 5_000.0, "USD per kW-month from 0 to 5,000"),
        default: 184.0, Cited,
        source: [
            "cbre-h2-2024",
            "CBRE, North America Data Center Trends H2 2024: wholesale colocation 250–500 kW",
            "https://www.cbre.com/insights/reports/north-america-data-center-trends-h2-2024",
            "2025-02-26"
        ],
        note: Some("per kW of provisioned IT load; retail colocation for small footprints costs more"),
        help: "colocation space and power provisioning, per kW of a unit's peak power (at most 5,000: retail colocation in the dearest markets is below $500/kW-month, ×10)",
    },
    maintenance_share_per_year {
        unit: "fraction of purchase price per year",
        valid: Valid::from_to(0.0, 1.0, "a fraction of the purchase price per year from 0 to 1, e.g. 0.1 for 10 %"),
        default: 0.10, Cited,
        source: [
            "alpine-2025",
            "alpineblockchain.com, GPU server TCO (hardware support ~10 %/yr of capex; 10–12 % per librarytechnology.org)",
            "",
            "2025"
        ],
        note: None,
        help: "hardware support and maintenance of on-prem units, per year, on the purchase price (without installation) of every unit installed that year, spares and idle units included, each at the price its lot was bought for",
    },
    depreciation_years {
        unit: "years",
        valid: Valid::from_to(1.0, 30.0, "whole years from 1 to 30").whole(),
        default: 5.0, Cited,
        source: [
            "amazon-10k-2025",
            "Amazon 10-K: servers depreciated over 5 years from 2025-01-01 (enterprises 3–5 years)",
            "",
            "2025-02-11"
        ],
        note: Some("book life only: the hardware is replaced after `refresh_years`"),
        help: "accounting life of an on-prem unit: straight-line book value (reported, not ranked) and tax depreciation when `tax_depreciation` = 0",
    },
    refresh_years {
        unit: "years",
        valid: Valid::from_to(1.0, 30.0, "whole years from 1 to 30").whole(),
        default: 5.0, Cited,
        source: [
            "techtarget-refresh",
            "TechTarget, 'server refresh cycle': 'Traditionally, refresh cycles have averaged around five years … some businesses now work on a three-year replacement cycle'",
            "https://www.techtarget.com/whatis/definition/server-refresh-cycle",
            "2013-03"
        ],
        note: Some("GPU economic life is argued to be 3–5 years (reference/hardware.md §6); set 3 or 4 for GPU fleets you replace by generation"),
        help: "service life of an on-prem unit: it is retired (sold at market) after this many years plus `extend_life_years`, and replaced only if the fleet still needs it",
    },
    extend_life_years {
        unit: "years",
        valid: Valid::from_to(0.0, 30.0, "whole years from 0 to 30").whole(),
        default: 0.0, Estimate,
        source: [
            "policy-extend",
            "tco-sim default: a policy, not a fact: refresh on time",
            "",
            "2026-11"
        ],
        note: Some("0: replace at refresh_years; set 1–2 to sweat the hardware instead of refreshing (it keeps paying maintenance, space, power and staff)"),
        help: "years a unit keeps running past `refresh_years` before it is replaced",
    },
    retire_surplus {
        unit: "1 = retire, 0 = keep",
        valid: Valid::from_to(0.0, 1.0, "1 (retire surplus units: sell them at market) or 0 (keep them installed, idle)").whole(),
        default: 1.0, Estimate,
        source: [
            "policy-surplus",
            "tco-sim default: a policy, not a fact: retire what the fleet no longer needs",
            "",
            "2026-11"
        ],
        note: Some("retire: a surplus unit sells for more now than later (it loses resale_decline_per_year a year) and stops paying maintenance, space, idle power and staff; keep (0) if the traffic may come back"),
        help: "what happens to on-prem units the fleet no longer needs when it shrinks: 1 sells them at market value at their age, 0 keeps them installed and idle until their refresh",
    },
    hardware_price_change_per_year {
        unit: "fraction per year",
        valid: Valid::from_to(-0.5, 0.5, "a yearly change from -0.5 to 0.5; negative is cheaper, e.g. -0.1"),
        default: 0.0, Estimate,
        source: [
            "price-change",
            "tco-sim default: no citable series of a fixed server SKU's price over its sale life was found; GPU rental prices fell (H100 above $8/h in 2023 to about $2–2.5/h in 2026, aitechconnect-976.pages.dev, 2026) but purchase prices track the generation on sale",
            "",
            "2026-11"
        ],
        note: Some("0: a later purchase costs what the profile says; set a negative rate for a quoted decline of the same SKU"),
        help: "change of the purchase price of units bought in later years: a unit bought in year y costs price × (1 + this)^(y − 1); its maintenance, resale and book value follow its own price",
    },
    availability_target {
        unit: "probability",
        valid: Valid::from_to(0.0, 0.999999, "a probability from 0 (no spares) to 0.999999, e.g. 0.99982"),
        default: 0.99982, Cited,
        source: [
            "uptime-tier-iii",
            "Uptime Institute Tier classification via viabandwidth.com: 'Tier III maps to about 99.982% availability (roughly 1.6 hours of downtime per year)'",
            "https://viabandwidth.com/datacenters/guides/tier-3-vs-tier-4",
            "2026"
        ],
        note: Some("a facility figure applied to the fleet: the chance that enough units are up to carry the planned load; 0 buys no spares (a page read in 2026, undated)"),
        help: "on-prem spares: the smallest k such that P(more than k of the N + k units are down) ≤ 1 − this; a tier's `spares` overrides it",
    },
    gpu_unit_failures_per_year {
        unit: "failures/unit-year",
        valid: Valid::from_to(0.0, 50.0, "failures per unit-year from 0 to 50"),
        default: 1.38, Derived,
        source: [
            "llama3-interruptions",
            "Meta, The Llama 3 Herd of Models, via DatacenterDynamics: 419 unexpected interruptions in 54 days on 16,384 H100 GPUs (2,048 8-GPU servers)",
            "https://www.datacenterdynamics.com/en/news/meta-report-details-hundreds-of-gpu-and-hbm3-related-interruptions-to-llama-3-training-run",
            "2024-07"
        ],
        note: Some("419 / (54 / 365) / 2,048 = 1.38 per server-year; some were cleared by a restart, so it overstates the repairs"),
        help: "failures per unit and year of GPU and accelerator units, for spares",
    },
    cpu_unit_failures_per_year {
        unit: "failures/unit-year",
        valid: Valid::from_to(0.0, 50.0, "failures per unit-year from 0 to 50"),
        default: 0.08, Estimate,
        source: [
            "vishwanath-2010",
            "Vishwanath & Nagappan, 'Characterizing Cloud Computing Hardware Reliability', SoCC 2010 (Microsoft Research)",
            "https://www.microsoft.com/en-us/research/publication/characterizing-cloud-computing-hardware-reliability/",
            "2010-06"
        ],
        note: Some("recalled from the paper (about 8 % of servers see a hardware incident in a year); the figure itself was not retrieved, so check it before relying on it"),
        help: "failures per unit and year of CPU units, for spares",
    },
    repair_days {
        unit: "days",
        valid: Valid::from_to(0.0, 365.0, "days from 0 to 365"),
        default: 3.0, Estimate,
        source: [
            "repair-time",
            "tco-sim default: next-business-day parts under a support contract, plus diagnosis and burn-in",
            "",
            "2026-11"
        ],
        note: Some("a unit is down λ·r / (365 + λ·r) of the time (λ failures a year, r days each); set your support contract's repair time"),
        help: "days a failed unit is out of service, for spares",
    },
    electricity_price_change_per_year {
        unit: "fraction per year",
        valid: Valid::from_to(-0.5, 0.5, "a yearly change from -0.5 to 0.5, e.g. 0.013"),
        default: 0.013, Derived,
        source: [
            "eia-industrial-2011-2023",
            "EIA Electric Power Monthly Table 5.3: US industrial average 6.88 ¢/kWh in 2011; EIA Electric Power Annual 2023: 8.06 ¢/kWh",
            "https://www.eia.gov/electricity/annual/",
            "2024-10-17"
        ],
        note: Some("(8.06 / 6.88)^(1/12) − 1 = 1.3 % a year, nominal, like the discount rate; no EIA projection was captured"),
        help: "yearly change of the on-prem energy price (and of a tier's all-in energy_usd_per_unit_hour): year y pays price × (1 + this)^(y − 1)",
    },
    tax_rate {
        unit: "fraction",
        valid: Valid::from_to(0.0, 0.9, "a tax rate from 0 (pre-tax) to 0.9, e.g. 0.21"),
        default: 0.0, Estimate,
        source: [
            "pre-tax",
            "tco-sim default: a pre-tax comparison; the US federal corporate rate is 21 % (26 U.S.C. § 11(b), from 2018)",
            "https://www.law.cornell.edu/uscode/text/26/11",
            "2017-12-22"
        ],
        note: Some("0: pre-tax; set your marginal rate (federal + state) for an after-tax net present cost, on which the options are then ranked"),
        help: "income-tax rate: when above 0, costs are deducted at this rate, owned hardware is depreciated for tax (`tax_depreciation`), sales pay tax on the gain over tax book value, and options rank on the after-tax net present cost",
    },
    tax_depreciation {
        unit: "0 = straight-line, 1 = MACRS",
        valid: Valid::from_to(0.0, 1.0, "0 (straight-line over depreciation_years) or 1 (MACRS 5-year, half-year convention)").whole(),
        default: 0.0, Cited,
        source: [
            "irs-pub-946",
            "IRS Publication 946, How To Depreciate Property, Table A-1: 5-year property (computers) 20, 32, 19.2, 11.52, 11.52, 5.76 %",
            "https://www.irs.gov/publications/p946",
            "2024"
        ],
        note: Some("straight-line by default; MACRS 5-year is the US tax schedule for computers"),
        help: "tax depreciation of owned hardware, when tax_rate > 0: 0 straight-line over depreciation_years, 1 MACRS 5-year (IRS Pub 946 Table A-1)",
    },
    resale_decline_per_year {
        unit: "share/year",
        valid: Valid::from_to(0.0, 1.0, "a share of the remaining value lost each year, from 0 to 1"),
        default: 0.35, Cited,
        source: [
            "glri-h100-residual-2026",
            "GPU Lease Rate Index, H100 depreciation curve from 500+ secondary-market transactions: 60–65 % of MSRP after 1 year, 40–45 % after 2, 25–35 % after 3, 15–20 % after 4, 10–15 % after 5",
            "https://v2-pseo-ai.pages.dev/residual/h100-depreciation-calculator",
            "2026-01-08"
        ],
        note: Some("a geometric fit: 0.65^age gives 65, 42, 27, 18, 12 % at ages 1–5, inside every band; a single tracker's figures (computeforecast.com, 2026: used H100s $15,000–28,000), applied to every kind of hardware"),
        help: "market value lost each year by owned hardware: a unit sells for price × (1 − this)^age when the horizon ends",
    },
    discount_rate {
        unit: "fraction per year",
        valid: Valid::from_to(0.0, 1.0, "a yearly rate from 0 to 1, e.g. 0.08 for 8 %"),
        default: 0.08, Estimate,
        source: [
            "damodaran-2026",
            "Damodaran, cost of capital by US industry, January 2026 (mostly 5–10 %)",
            "https://pages.stern.nyu.edu/~adamodar/New_Home_Page/datafile/wacc.html",
            "2026-01"
        ],
        note: Some("a mid-range cost of capital; use your finance team's rate"),
        help: "yearly rate the net present value discounts by",
        range: DeclaredRange {
            low: 0.06,
            high: 0.12,
            why: "reference/hardware.md §6: 8 % with a sensitivity of 6–12 % (Damodaran's January 2026 industry costs of capital are mostly 5–10 %)",
        },
    },
    install_share_of_capex {
        unit: "fraction of purchase price",
        valid: Valid::from_to(0.0, 2.0, "a fraction of the purchase price from 0 to 2"),
        default: 0.15, Derived,
        source: [
            "hamilton-split",
            "J. Hamilton's data-centre cost split via danluu.com/datacenter-power: servers 53 %, network 8 % of monthly cost",
            "https://danluu.com/datacenter-power/",
            "2019"
        ],
        note: Some("network and installation as a share of server capex: 8 % / 53 % = 0.15"),
        help: "network and installation, paid with each purchase",
    },
    units_per_admin {
        unit: "units per administrator",
        valid: Valid::from_to(0.1, 100_000.0, "units per administrator from 0.1 to 100,000"),
        default: 100.0, Estimate,
        source: [
            "staffing",
            "Industry staffing ratios: 1 administrator per ~100 servers (GPU: 1 FTE per 50–100 nodes); traditional 10–20:1, hyperscale 1,000+:1",
            "",
            "2024"
        ],
        note: Some("a fractional share of an administrator is charged per unit"),
        help: "on-prem units one administrator runs (0.1 is ten people per unit, far beyond any staffing; 100,000 is a hyperscaler's 1,000+:1 ratio ×100)",
    },
    admin_cost_usd_per_year {
        unit: "USD/year",
        valid: Valid::from_to(0.0, 5_000_000.0, "USD per year from 0 to 5,000,000"),
        default: 126_700.0, Derived,
        source: [
            "bls-ooh-2022",
            "US BLS Occupational Outlook Handbook: network and computer systems administrators, median pay $90,520 (May 2022)",
            "https://www.bls.gov/ooh/computer-and-information-technology/network-and-computer-systems-administrators.htm",
            "2023-09"
        ],
        note: Some("$90,520 x 1.4 employer cost loading (benefits and taxes; the 1.4 is an estimate)"),
        help: "employer cost of one administrator (at most 5,000,000: the best-paid engineering staff cost under $500,000 a year, ×10)",
    },
    egress_bytes_per_request {
        unit: "B",
        valid: Valid::from_to(0.0, 1e9, "bytes from 0 to 1e9 (1 GB)"),
        default: 2_000.0, Estimate,
        source: [
            "egress-size",
            "tco-sim default: a JSON response of ~2 KB per request (a label, an embedding or a short completion)",
            "",
            "2026-11"
        ],
        note: Some("set it from your API's real response size"),
        help: "response bytes sent out per request (at most 1 GB: a generated image or audio clip is under 100 MB, ×10)",
    },
    egress_usd_per_gb {
        unit: "USD/GB",
        valid: Valid::from_to(0.0, 5.0, "USD per GB from 0 to 5"),
        default: 0.09, Cited,
        source: [
            "aws-egress-2026",
            "AWS data transfer out to the internet, first 10 TB/month ($0.085–0.05 beyond)",
            "https://aws.amazon.com/ec2/pricing/on-demand/",
            "2026"
        ],
        note: Some("charged to cloud options only; on-prem transit is inside the installation share. A profile that names its provider's egress schedule (AWS, OCI) is priced by that schedule instead, unless the scenario sets this key"),
        help: "flat price of data sent out of the cloud: when the scenario sets it, it overrides every profile's egress schedule (free allowance and volume tiers); otherwise it prices only profiles that name no schedule (1 GB = 1e9 B; at most 5: the dearest published internet egress is under $0.5/GB, ×10)",
    },
    reserved_upfront_share {
        unit: "fraction of the commitment",
        valid: Valid::from_to(0.0, 1.0, "a fraction from 0 to 1: 0 no upfront, 0.5 partial, 1 all upfront"),
        default: 0.0, Cited,
        source: [
            "aws-ri-payment",
            "AWS EC2 Reserved Instances and Savings Plans: No Upfront, Partial Upfront and All Upfront payment options; the profiles' reserved rates are the No Upfront rates (instances.vantage.sh snapshot via tsaol/aws-gpu gpu_instances_raw.json@2d0108c)",
            "https://aws.amazon.com/ec2/pricing/reserved-instances/pricing/",
            "2025-11-30"
        ],
        note: Some("0 = No Upfront, the payment option the profiles' reserved prices are quoted for"),
        help: "share of a reservation's whole-term cost paid when it is bought (0 no upfront, 0.5 partial, 1 all upfront); the rest is paid by the hour. The upfront part is paid at the start of the lot's first year and buys the discount below",
    },
    reserved_1y_partial_upfront_discount {
        unit: "fraction of the no-upfront rate",
        valid: Valid::from_to(0.0, 0.5, "a fraction from 0 to 0.5"),
        default: 0.0476, Derived,
        source: [
            "vantage-ri-options-2025-11-30",
            "instances.vantage.sh raw data as mirrored in tsaol/aws-gpu data/gpu_instances_raw.json@2d0108c: us-east-1 Linux reserved rates by payment option",
            "https://github.com/tsaol/aws-gpu/blob/2d0108c7bd261c8e40493fbd35135437bd6c9099/data/gpu_instances_raw.json",
            "2025-11-30"
        ],
        note: Some("p5.48xlarge 1-yr Convertible: 1 − 41.279954 / 43.344 = 0.0476 (g6.xlarge 1-yr Standard: 1 − 0.499033 / 0.52392 = 0.0475)"),
        help: "how much cheaper, per effective hour, a 1-year Partial Upfront reservation is than No Upfront; between the payment options the discount is interpolated linearly in `reserved_upfront_share`",
    },
    reserved_1y_all_upfront_discount {
        unit: "fraction of the no-upfront rate",
        valid: Valid::from_to(0.0, 0.5, "a fraction from 0 to 0.5"),
        default: 0.0667, Derived,
        source: [
            "vantage-ri-options-2025-11-30",
            "instances.vantage.sh raw data as mirrored in tsaol/aws-gpu data/gpu_instances_raw.json@2d0108c: us-east-1 Linux reserved rates by payment option",
            "https://github.com/tsaol/aws-gpu/blob/2d0108c7bd261c8e40493fbd35135437bd6c9099/data/gpu_instances_raw.json",
            "2025-11-30"
        ],
        note: Some("p5.48xlarge 1-yr Convertible: 1 − 40.454452 / 43.344 = 0.0667 (g6.xlarge 1-yr Standard: 1 − 0.489041 / 0.52392 = 0.0666)"),
        help: "how much cheaper, per effective hour, a 1-year All Upfront reservation is than No Upfront",
    },
    reserved_3y_partial_upfront_discount {
        unit: "fraction of the no-upfront rate",
        valid: Valid::from_to(0.0, 0.5, "a fraction from 0 to 0.5"),
        default: 0.0741, Derived,
        source: [
            "vantage-ri-options-2025-11-30",
            "instances.vantage.sh raw data as mirrored in tsaol/aws-gpu data/gpu_instances_raw.json@2d0108c: us-east-1 Linux reserved rates by payment option",
            "https://github.com/tsaol/aws-gpu/blob/2d0108c7bd261c8e40493fbd35135437bd6c9099/data/gpu_instances_raw.json",
            "2025-11-30"
        ],
        note: Some("p5.48xlarge 3-yr Standard: 1 − 22.015991 / 23.77728 = 0.0741 (g6.xlarge: 1 − 0.342025 / 0.3694 = 0.0741)"),
        help: "how much cheaper, per effective hour, a 3-year Partial Upfront reservation is than No Upfront",
    },
    reserved_3y_all_upfront_discount {
        unit: "fraction of the no-upfront rate",
        valid: Valid::from_to(0.0, 0.5, "a fraction from 0 to 0.5"),
        default: 0.1296, Derived,
        source: [
            "vantage-ri-options-2025-11-30",
            "instances.vantage.sh raw data as mirrored in tsaol/aws-gpu data/gpu_instances_raw.json@2d0108c: us-east-1 Linux reserved rates by payment option",
            "https://github.com/tsaol/aws-gpu/blob/2d0108c7bd261c8e40493fbd35135437bd6c9099/data/gpu_instances_raw.json",
            "2025-11-30"
        ],
        note: Some("p5.48xlarge 3-yr Standard: 1 − 20.695053 / 23.77728 = 0.1296 (g6.xlarge: 1 − 0.321499 / 0.3694 = 0.1297)"),
        help: "how much cheaper, per effective hour, a 3-year All Upfront reservation is than No Upfront",
    },
    spot_interruption_overhead {
        unit: "fraction of spot instance-hours",
        valid: Valid::from_to(0.0, 2.0, "a fraction from 0 to 2"),
        default: 0.10, Estimate,
        source: [
            "spot-overhead",
            "tco-sim estimate; AWS Spot Instance Advisor interruption frequencies as listed by instances.vantage.sh (p5.48xlarge 5–10 %, g4dn/g6/inf2 > 20 % of instances a month)",
            "https://github.com/tsaol/aws-gpu/blob/2d0108c7bd261c8e40493fbd35135437bd6c9099/data/gpu_instances_raw.json",
            "2025-11-30"
        ],
        note: Some("extra spot instance-hours for spare capacity, replacements booting and reloading the model, and requests re-run after an interruption; no published figure, set it from your own interruption history"),
        help: "spot cost = instance-hours × spot price × (1 + this) (at most 2: running three times the hours to ride out interruptions is beyond any sensible use of spot)",
    },
    cloud_support_share {
        unit: "fraction of cloud spend",
        valid: Valid::from_to(0.0, 1.0, "a fraction from 0 to 1, e.g. 0.05 for 5 %"),
        default: 0.0, Estimate,
        source: [
            "aws-support-pricing",
            "AWS Support plan pricing: Business support costs the greater of $100/month or 10 % of the first $10K of monthly usage, 7 % from $10K to $80K, 5 % from $80K to $250K, 3 % beyond",
            "https://aws.amazon.com/vi/premiumsupport/pricing/",
            "2026"
        ],
        note: Some("0: support is billed per account on all of its usage, so what one service adds is the account's marginal rate (3–10 % on AWS Business, e.g. 5 % for an account spending $80K–250K a month); set that rate here. OCI includes basic support"),
        help: "provider support plan as a share of a cloud option's spend (instances, upfront payments, storage and egress)",
    },
    cloud_storage_gb_per_unit {
        unit: "GB per instance",
        valid: Valid::from_to(0.0, 1e6, "GB from 0 to 1,000,000"),
        default: 200.0, Estimate,
        source: [
            "storage-size",
            "tco-sim estimate: a root volume, a serving container image and one copy of the model's weights (Llama-3-70B in fp16 is 140 GB; most models are far smaller)",
            "",
            "2026-11"
        ],
        note: Some("block storage attached to each running cloud instance; on-prem disks are in the purchase price. Set it from your image and weights"),
        help: "block storage per running cloud instance, paid for every instance-hour (at most 1,000,000 GB: 64 volumes of the largest 16 TB EBS size is 1,000 TB)",
    },
    cloud_storage_usd_per_gb_month {
        unit: "USD/GB-month",
        valid: Valid::from_to(0.0, 10.0, "USD per GB-month from 0 to 10"),
        default: 0.08, Estimate,
        source: [
            "aws-ebs-gp3",
            "Amazon EBS pricing: General Purpose SSD (gp3) storage $0.08 per GB-month in US East (N. Virginia), 3,000 IOPS and 125 MB/s included",
            "https://aws.amazon.com/ebs/pricing/",
            "2026"
        ],
        note: Some("AWS's list rate as commonly quoted; no stored copy of the page with the figure was found (the EU page aws.eu/ebs/pricing has the same per-GB-month billing, in EUR), so it is marked an estimate"),
        help: "price of that block storage (a month is 730 h; at most 10: the dearest provisioned-IOPS volumes cost under $1/GB-month, ×10)",
    },
    cloud_pue {
        unit: "ratio",
        valid: Valid::from_to(1.0, 5.0, "a PUE from 1.0 to 5.0 (hyperscale clouds report 1.1–1.2)"),
        default: 1.15, Cited,
        source: [
            "aws-pue-2024",
            "AWS Sustainable Infrastructure: 'In 2024, AWS data centers reported a global PUE of 1.15'",
            "https://aws.amazon.com/sustainability/data-centers/",
            "2025"
        ],
        note: Some("Google reports ~1.10, Microsoft 1.18 fleet-wide; IDC puts the public-cloud average at 1.25. Energy and carbon only: a cloud price already includes power"),
        help: "power usage effectiveness of the cloud provider's data centres, for the energy and carbon of cloud options (never their cost)",
    },
    grid_kg_co2e_per_kwh {
        unit: "kg CO2e/kWh",
        valid: Valid::from_to(0.0, 2.0, "kg CO2e per kWh from 0 to 2 (a coal-only grid emits about 1)"),
        default: 0.366, Derived,
        source: [
            "eia-co2-2023",
            "EIA FAQ 'How much carbon dioxide is produced per kilowatthour of U.S. electricity generation?' (2023: 1,532 Mt CO2 from 4,183 TWh, 0.81 lb/kWh)",
            "https://www.eia.gov/tools/faqs/faq.php?id=74&t=3",
            "2024"
        ],
        note: Some("1,532 Mt / 4,183 TWh = 0.366 kg/kWh: US average, location-based, CO2 only (methane and N2O add about 1 %); set your region's grid or your supplier's market-based factor"),
        help: "carbon emitted per kWh of facility energy, for every option (location-based: the grid the units draw from, before any renewable-energy certificates)",
    },
    software_usd_per_gpu_year {
        unit: "USD/GPU-year",
        valid: Valid::from_to(0.0, 50_000.0, "USD per GPU-year from 0 to 50,000"),
        default: 0.0, Estimate,
        source: [
            "nvaie-2023",
            "NVIDIA Q3 FY2024 earnings call (J. Huang): 'NVIDIA AI Enterprise is $4,500 per GPU per year'",
            "https://insidermonkey.com/blog/nvidia-corporation-nasdaqnvda-q3-2024-earnings-call-transcript-1227317/5",
            "2023-11-21"
        ],
        note: Some("0: open-source serving stacks (vLLM, TGI, Triton's open build) need no licence; set 4,500 to run NVIDIA AI Enterprise / NIM (H100 PCIe and H200 NVL include a 5-year subscription)"),
        help: "software licences per GPU and year, for units of GPU profiles (× the profile's GPUs per unit; at most 50,000: NVIDIA AI Enterprise's list price ×10); a tier's `software_usd_per_unit_year` overrides it",
    },
    network_usd_per_unit_year {
        unit: "USD/unit-year",
        valid: Valid::from_to(0.0, 1_000_000.0, "USD per unit-year from 0 to 1,000,000"),
        default: 0.0, Estimate,
        source: [
            "network-share",
            "tco-sim default: switches and cabling are in install_share_of_capex (Hamilton's 8 % network share of data-centre cost)",
            "",
            "2026-11"
        ],
        note: Some("0: nothing beyond the installation share; set it for switch-port support, a GPU fabric or transit contracts billed per server"),
        help: "on-prem network running cost per installed unit and year (switch-port support, transit) beyond the installation share (at most 1,000,000: beyond any per-server network bill)",
    },
}

/// The most spares a tier keeps (its `spares` key, and the availability target's search, stop
/// there).
pub const MAX_SPARES: u32 = 1_000_000;

/// The cited default of every cost assumption.
pub fn default_costs() -> CostInputs {
    CostInputs::default()
}

/// The declaration of the assumption with this scenario key.
pub fn cost_input(key: &str) -> Option<&'static CostInput> {
    COST_INPUTS.iter().find(|c| c.key == key)
}

/// Every scenario key, in declaration order (for did-you-mean help).
pub fn keys() -> Vec<&'static str> {
    COST_INPUTS.iter().map(|c| c.key).collect()
}

/// The markdown table of every cost assumption, as `docs/scenario-format.md` shows it between
/// its `cost-inputs` markers.
pub fn docs_table() -> String {
    let mut out = String::from(
        "| key | meaning | unit | valid | default | source of the default |\n|---|---|---|---|---|---|\n",
    );
    for c in COST_INPUTS {
        let d = &c.default;
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {}: {} ({}) |\n",
            c.key,
            c.help,
            c.unit,
            c.valid.text,
            d.value,
            d.basis.label(),
            d.source.title.replace('|', "\\|"),
            d.source.date,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_fields_and_defaults_agree() {
        let d = CostInputs::default();
        let fields = d.fields();
        assert_eq!(fields.len(), COST_INPUTS.len());
        for ((key, cited), decl) in fields.iter().zip(COST_INPUTS) {
            assert_eq!(*key, decl.key);
            assert_eq!(**cited, decl.default.cited());
            let v = decl.valid;
            let low = v.min.is_none_or(|m| {
                if v.strict_min {
                    cited.value > m
                } else {
                    cited.value >= m
                }
            });
            assert!(
                low && v.max.is_none_or(|m| cited.value <= m),
                "{key} default outside its range"
            );
            assert!(!v.whole || cited.value.fract() == 0.0, "{key}");
            assert!(
                crate::cite::is_date(&cited.source.date),
                "{key} default has no date"
            );
        }
        assert_eq!(d.pue.value, 1.56);
        assert_eq!(d.depreciation_years.value, 5.0);
    }

    #[test]
    fn get_mut_reaches_every_key_and_no_other() {
        let mut d = CostInputs::default();
        for key in keys() {
            d.get_mut(key).unwrap().value = -1.0;
        }
        assert!(d.fields().iter().all(|(_, c)| c.value == -1.0));
        assert!(d.get_mut("pue_ratio").is_none());
        assert_eq!(cost_input("pue").unwrap().unit, "ratio");
    }

    #[test]
    fn docs_table_has_a_row_per_assumption() {
        let t = docs_table();
        assert_eq!(t.lines().count(), 2 + COST_INPUTS.len());
        assert!(t.contains("| `pue` | power usage effectiveness"), "{t}");
        assert!(t.contains("| 126700 | derived: US BLS"), "{t}");
    }
}
