//! Interim `[traffic]` table (peak, mean, growth) until the traffic module lands.

use serde::Deserialize;
use toml::Spanned;

use crate::input::{InputError, NumberCheck, SourceFile};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrafficFile {
    pub peak_rps: Spanned<f64>,
    pub mean_rps: Option<Spanned<f64>>,
    #[serde(default)]
    pub growth_per_year: Option<Spanned<f64>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TrafficSpec {
    pub peak: f64,
    pub mean: f64,
    pub growth: f64,
}

impl TrafficSpec {
    fn factor(&self, year: u32) -> f64 {
        (1.0 + self.growth).powi(year as i32 - 1)
    }
    pub fn peak_rps(&self, year: u32) -> f64 {
        self.peak * self.factor(year)
    }
    pub fn mean_rps(&self, year: u32) -> f64 {
        self.mean * self.factor(year)
    }
    pub fn requests_per_year(&self, year: u32) -> f64 {
        self.mean_rps(year) * 8760.0 * 3600.0
    }
    pub fn hourly_rates(&self, year: u32) -> Vec<f64> {
        (0..8760)
            .map(|h| {
                let x = ((h % 24) as f64 - 14.0) / 24.0 * std::f64::consts::TAU;
                (self.mean + (self.peak - self.mean) * x.cos()) * self.factor(year)
            })
            .collect()
    }
    pub fn description(&self) -> String {
        format!("peak {} req/s, mean {} req/s", self.peak, self.mean)
    }
}

pub fn validate(
    src: &SourceFile,
    f: &TrafficFile,
    _base: &std::path::Path,
) -> Result<TrafficSpec, InputError> {
    let peak = NumberCheck {
        source: src,
        field: "traffic.peak_rps",
    }
    .positive(&f.peak_rps, "req/s > 0")?;
    let mean = match &f.mean_rps {
        Some(m) => NumberCheck {
            source: src,
            field: "traffic.mean_rps",
        }
        .range(m, Some(0.0), true, Some(peak), "0 < mean_rps ≤ peak_rps")?,
        None => peak,
    };
    let growth = match &f.growth_per_year {
        Some(g) => NumberCheck {
            source: src,
            field: "traffic.growth_per_year",
        }
        .range(
            g,
            Some(-0.9),
            false,
            Some(10.0),
            "a fraction, e.g. 0.3 for 30 % a year",
        )?,
        None => 0.0,
    };
    Ok(TrafficSpec { peak, mean, growth })
}
