//! What each provider charges for data sent to the internet: a monthly free allowance, then a
//! price per GB that falls with the month's volume. A profile names its provider's schedule
//! (`[price] egress = "aws-internet"`); the cost model prices a tier's responses with it, month
//! by month (a year's egress is spread evenly over its twelve months).
//!
//! Each schedule is declared once here, with its source; reports list its figures beside the
//! profile's other numbers. 1 GB = 1e9 B, as everywhere in tco-sim (providers bill GiB-like
//! units; the difference, 7 %, is far inside the uncertainty of bytes per response).

use serde::Serialize;

use crate::cite::{Basis, Cited, Source};

/// One price band: every GB of the month's volume up to `up_to_gb` (counted from the first GB
/// of the month, free allowance included) costs `usd_per_gb`; `None` is every GB beyond.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EgressBand {
    pub up_to_gb: Option<f64>,
    pub usd_per_gb: f64,
}

/// A provider's internet egress price list.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EgressSchedule {
    /// How a profile names it.
    pub name: &'static str,
    /// GB a month that cost nothing (per account or tenancy).
    pub free_gb_per_month: f64,
    /// Bands after the free allowance, ascending.
    pub bands: &'static [EgressBand],
    pub basis: Basis,
    pub source_key: &'static str,
    pub source_title: &'static str,
    pub source_url: &'static str,
    pub source_date: &'static str,
    pub note: &'static str,
}

/// Every egress schedule a profile may name.
pub static SCHEDULES: &[EgressSchedule] = &[
    EgressSchedule {
        name: "aws-internet",
        free_gb_per_month: 100.0,
        bands: &[
            EgressBand {
                up_to_gb: Some(10_000.0),
                usd_per_gb: 0.09,
            },
            EgressBand {
                up_to_gb: Some(50_000.0),
                usd_per_gb: 0.085,
            },
            EgressBand {
                up_to_gb: Some(150_000.0),
                usd_per_gb: 0.07,
            },
            EgressBand {
                up_to_gb: None,
                usd_per_gb: 0.05,
            },
        ],
        basis: Basis::Cited,
        source_key: "aws-egress-2026",
        source_title: "wring.co, AWS data transfer pricing guide: data transfer out to the internet, first 100 GB/month free, $0.09/GB up to 10 TB, $0.085 next 40 TB, $0.07 next 100 TB, $0.05 over 150 TB (US regions; the same tiers as cloud-cost-557.pages.dev, June 2026)",
        source_url: "https://wring.co/blog/aws-data-transfer-pricing-guide",
        source_date: "2026",
        note: "the 100 GB free allowance is per account and aggregated across services; the tiers count the account's whole monthly volume",
    },
    EgressSchedule {
        name: "oci-internet",
        free_gb_per_month: 10_000.0,
        bands: &[EgressBand {
            up_to_gb: None,
            usd_per_gb: 0.0085,
        }],
        basis: Basis::Estimate,
        source_key: "oci-egress",
        source_title: "OCIFinOps, 'Data Transfer: The Hidden Cost That Can Double Your Cloud Bill': 10 TB/month free outbound per tenancy (oraclenegotiations.pages.dev, Nov 2023, agrees)",
        source_url: "https://ocifinops.com/blog/data-transfer-costs-hidden-cloud-expense",
        source_date: "2024-11-01",
        note: "the 10 TB/month free allowance is cited; the $0.0085/GB beyond it (North America and Europe) is the widely quoted OCI list rate, not found in a stored source: an estimate",
    },
];

/// The schedule a profile names, if it exists.
pub fn schedule(name: &str) -> Option<&'static EgressSchedule> {
    SCHEDULES.iter().find(|s| s.name == name)
}

/// Every schedule's name (for did-you-mean help).
pub fn names() -> Vec<&'static str> {
    SCHEDULES.iter().map(|s| s.name).collect()
}

impl EgressSchedule {
    /// What `gb` sent out in one month costs: nothing up to the allowance, then each GB at the
    /// price of the band its position in the month's volume falls in.
    pub fn monthly_usd(&self, gb: f64) -> f64 {
        let mut cost = 0.0;
        let mut from = self.free_gb_per_month;
        for b in self.bands {
            let to = b.up_to_gb.unwrap_or(f64::INFINITY).max(from);
            let in_band = (gb.min(to) - from).max(0.0);
            cost += in_band * b.usd_per_gb;
            from = to;
            if gb <= to {
                break;
            }
        }
        cost
    }

    fn cited(&self, value: f64) -> Cited {
        Cited {
            log_sd: None,
            value,
            basis: self.basis,
            source: Source {
                key: self.source_key.into(),
                title: self.source_title.into(),
                url: (!self.source_url.is_empty()).then(|| self.source_url.into()),
                date: self.source_date.into(),
            },
            note: Some(self.note.into()),
        }
    }

    /// The schedule's figures with their names in reports: the free allowance and each band's
    /// price, e.g. `egress.aws-internet.free [GB/month]`, `egress.aws-internet.to_10000_gb [USD/GB]`.
    pub fn cited_numbers(&self) -> Vec<(String, Cited)> {
        let mut out = vec![(
            format!("egress.{}.free [GB/month]", self.name),
            self.cited(self.free_gb_per_month),
        )];
        for b in self.bands {
            let band = match b.up_to_gb {
                Some(to) => format!("to_{to}_gb"),
                None => "beyond".into(),
            };
            out.push((
                format!("egress.{}.{band} [USD/GB]", self.name),
                self.cited(b.usd_per_gb),
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aws_and_oci_schedules_by_hand() {
        let aws = schedule("aws-internet").unwrap();
        let oci = schedule("oci-internet").unwrap();
        // 50 GB: inside both free allowances.
        assert_eq!(aws.monthly_usd(50.0), 0.0);
        assert_eq!(oci.monthly_usd(50.0), 0.0);
        // 20,000 GB (20 TB) a month.
        // AWS: (10,000 − 100) × 0.09 + 10,000 × 0.085 = 891 + 850 = 1,741.
        assert!((aws.monthly_usd(20_000.0) - 1_741.0).abs() < 1e-9);
        // OCI: (20,000 − 10,000) × 0.0085 = 85.
        assert!((oci.monthly_usd(20_000.0) - 85.0).abs() < 1e-9);
        // 200,000 GB: 891 + 40,000 × 0.085 + 100,000 × 0.07 + 50,000 × 0.05
        //           = 891 + 3,400 + 7,000 + 2,500 = 13,791.
        assert!((aws.monthly_usd(200_000.0) - 13_791.0).abs() < 1e-9);
        assert_eq!(aws.monthly_usd(0.0), 0.0);
    }

    #[test]
    fn bands_ascend_and_prices_are_finite() {
        for s in SCHEDULES {
            let mut last = s.free_gb_per_month;
            for b in s.bands {
                assert!(
                    b.usd_per_gb.is_finite() && b.usd_per_gb >= 0.0,
                    "{}",
                    s.name
                );
                if let Some(to) = b.up_to_gb {
                    assert!(to > last, "{}", s.name);
                    last = to;
                }
            }
            assert!(s.bands.last().unwrap().up_to_gb.is_none(), "{}", s.name);
            assert!(crate::cite::is_date(s.source_date), "{}", s.name);
        }
    }
}
