//! Checks a [`FleetSpec`] and a [`RunSpec`] once, before any event runs, so the engine can trust
//! every number (no NaN, no zero-sized pools, tables as long as the counts they describe).

use super::{ClosedLoop, ThinkTime};
use super::{
    FleetSpec, IterationCost, MAX_BATCH, MAX_DURATION_S, RunSpec, ServerModel, ServiceDist,
    SimError, Variability,
};

/// Most servers (slots, cores, devices or replicas) over a whole fleet, 4 194 304: far above any
/// fleet anyone buys (10 000 servers × 128 cores is 1.3 M), and small enough that per-server
/// state (tens of bytes each) stays within a few hundred MB.
pub(crate) const MAX_SERVERS: u64 = 1 << 22;

/// A duration that must be finite, > 0 and at most [`MAX_DURATION_S`].
fn positive(field: impl Into<String>, value: f64) -> Result<(), SimError> {
    if value.is_finite() && value > 0.0 && value <= MAX_DURATION_S {
        Ok(())
    } else {
        Err(SimError::BadNumber {
            field: field.into(),
            value,
            valid: "must be a finite number of seconds > 0 and at most 1e6",
        })
    }
}

/// A duration that must be finite, >= 0 and at most [`MAX_DURATION_S`].
fn non_negative(field: impl Into<String>, value: f64) -> Result<(), SimError> {
    if value.is_finite() && (0.0..=MAX_DURATION_S).contains(&value) {
        Ok(())
    } else {
        Err(SimError::BadNumber {
            field: field.into(),
            value,
            valid: "must be a finite number of seconds >= 0 and at most 1e6",
        })
    }
}

fn batch_limit(field: &'static str, value: u32) -> Result<(), SimError> {
    at_least_one(field, u64::from(value))?;
    if value > MAX_BATCH {
        return Err(SimError::TooLarge {
            field,
            value: u64::from(value),
            max: u64::from(MAX_BATCH),
        });
    }
    Ok(())
}

fn at_least_one(field: &'static str, value: u64) -> Result<(), SimError> {
    if value == 0 {
        Err(SimError::Zero { field })
    } else {
        Ok(())
    }
}

fn table(
    field: &'static str,
    t: &[f64],
    expected: usize,
    why: &'static str,
) -> Result<(), SimError> {
    if t.len() != expected {
        return Err(SimError::TableLength {
            field,
            len: t.len(),
            expected,
            why,
        });
    }
    for (i, &v) in t.iter().enumerate() {
        positive(format!("{field}[{i}]"), v)?;
    }
    Ok(())
}

fn service(d: &ServiceDist) -> Result<(), SimError> {
    match d {
        ServiceDist::Exponential { mean_s } => positive("server.service.mean_s", *mean_s),
        ServiceDist::Deterministic { s } => positive("server.service.s", *s),
        ServiceDist::LogNormal { mean_s, cv } => {
            positive("server.service.mean_s", *mean_s)?;
            // A cv above 100 puts almost all the mass near 0 and the mean in a vanishing tail;
            // nothing measured looks like that.
            if cv.is_finite() && (0.0..=100.0).contains(cv) {
                Ok(())
            } else {
                Err(SimError::BadNumber {
                    field: "server.service.cv".into(),
                    value: *cv,
                    valid: "must be a finite ratio in 0..=100",
                })
            }
        }
        ServiceDist::Empirical { samples_s } => {
            if samples_s.is_empty() {
                return Err(SimError::TableLength {
                    field: "server.service.samples_s",
                    len: 0,
                    expected: 1,
                    why: "at least one measured sample",
                });
            }
            for (i, &v) in samples_s.iter().enumerate() {
                non_negative(format!("server.service.samples_s[{i}]"), v)?;
            }
            if samples_s.iter().all(|&v| v == 0.0) {
                return Err(SimError::BadNumber {
                    field: "server.service.samples_s".into(),
                    value: 0.0,
                    valid: "at least one sample must be > 0",
                });
            }
            Ok(())
        }
    }
}

/// Most a variability cv may be: a log-normal of cv 10 already puts its median at 1/10 of the
/// mean; no measured service time spreads wider.
pub const MAX_VARIABILITY_CV: f64 = 10.0;

fn variability(v: &Variability) -> Result<(), SimError> {
    match v {
        Variability::None => Ok(()),
        Variability::LogNormal { cv } => {
            if cv.is_finite() && (0.0..=MAX_VARIABILITY_CV).contains(cv) {
                Ok(())
            } else {
                Err(SimError::BadNumber {
                    field: "server.variability.cv".into(),
                    value: *cv,
                    valid: "must be a finite ratio in 0..=10",
                })
            }
        }
        Variability::BySize {
            relative_work,
            spread,
            batch_attention,
        } => {
            if matches!(**spread, Variability::BySize { .. }) {
                return Err(SimError::NestedSizeSpread);
            }
            variability(spread)?;
            if relative_work.is_empty() {
                return Err(SimError::TableLength {
                    field: "server.variability.relative_work",
                    len: 0,
                    expected: 1,
                    why: "at least one request size",
                });
            }
            for (i, &x) in relative_work.iter().enumerate() {
                if !(x.is_finite() && x > 0.0 && x <= 1e6) {
                    return Err(SimError::BadNumber {
                        field: format!("server.variability.relative_work[{i}]"),
                        value: x,
                        valid: "must be a finite ratio > 0, up to 1e6",
                    });
                }
            }
            if let Some(a) = batch_attention {
                batch_attention_table(a, relative_work.len())?;
            }
            Ok(())
        }
        Variability::Empirical { relative } => {
            if relative.is_empty() {
                return Err(SimError::TableLength {
                    field: "server.variability.relative",
                    len: 0,
                    expected: 1,
                    why: "at least one measured time",
                });
            }
            for (i, &x) in relative.iter().enumerate() {
                non_negative(format!("server.variability.relative[{i}]"), x)?;
            }
            if relative.iter().all(|&x| x == 0.0) {
                return Err(SimError::BadNumber {
                    field: "server.variability.relative".into(),
                    value: 0.0,
                    valid: "at least one measured time must be > 0",
                });
            }
            Ok(())
        }
    }
}

fn iteration_cost(c: &IterationCost) -> Result<(), SimError> {
    non_negative("server.cost.fixed_s", c.fixed_s)?;
    non_negative("server.cost.prefill_s_per_token", c.prefill_s_per_token)?;
    non_negative(
        "server.cost.decode_compute_s_per_seq",
        c.decode_compute_s_per_seq,
    )?;
    non_negative("server.cost.weight_read_s", c.weight_read_s)?;
    non_negative("server.cost.kv_read_s_per_token", c.kv_read_s_per_token)?;
    non_negative("server.cost.attention_s_per_pair", c.attention_s_per_pair)?;
    non_negative(
        "server.cost.collective_s_per_token",
        c.collective_s_per_token,
    )?;
    non_negative(
        "server.cost.compiled_context_tokens",
        c.compiled_context_tokens,
    )?;
    non_negative("server.cost.stream_s_per_seq", c.stream_s_per_seq)?;
    non_negative(
        "server.cost.attention_block_s_per_token",
        c.attention_block_s_per_token,
    )?;
    // Every iteration must take time, or a replica could emit tokens without time passing.
    if c.fixed_s + c.weight_read_s <= 0.0 {
        return Err(SimError::BadNumber {
            field: "server.cost.fixed_s + server.cost.weight_read_s".into(),
            value: c.fixed_s + c.weight_read_s,
            valid: "must be > 0 so that every iteration takes time",
        });
    }
    Ok(())
}

/// Servers per unit of a model (slots, cores, devices, replicas).
pub(crate) fn servers_per_unit(m: &ServerModel) -> u64 {
    match m {
        ServerModel::Slots { slots, .. } => u64::from(*slots),
        ServerModel::SharedBandwidth {
            chips,
            cores_per_chip,
            ..
        } => u64::from(*chips) * u64::from(*cores_per_chip),
        ServerModel::Batching { devices, .. } => u64::from(*devices),
        ServerModel::ContinuousBatching { replicas, .. } => u64::from(*replicas),
    }
}

/// Check a fleet.
pub(crate) fn fleet(f: &FleetSpec) -> Result<(), SimError> {
    at_least_one("units", u64::from(f.units))?;
    match &f.server {
        ServerModel::Slots { slots, service: d } => {
            at_least_one("server.slots", u64::from(*slots))?;
            service(d)?;
        }
        ServerModel::SharedBandwidth {
            chips,
            cores_per_chip,
            time_at_busy_s,
            variability: v,
        } => {
            variability(v)?;
            at_least_one("server.chips", u64::from(*chips))?;
            at_least_one("server.cores_per_chip", u64::from(*cores_per_chip))?;
            table(
                "server.time_at_busy_s",
                time_at_busy_s,
                *cores_per_chip as usize,
                "one per number of busy cores, 1..=cores_per_chip",
            )?;
        }
        ServerModel::Batching {
            devices,
            max_batch,
            window_s,
            batch_time_s,
            variability: v,
        } => {
            variability(v)?;
            at_least_one("server.devices", u64::from(*devices))?;
            batch_limit("server.max_batch", *max_batch)?;
            non_negative("server.window_s", *window_s)?;
            table(
                "server.batch_time_s",
                batch_time_s,
                *max_batch as usize,
                "one per batch size, 1..=max_batch",
            )?;
            if let Some(t) = f.timeout_s
                && t <= *window_s
            {
                return Err(SimError::WindowNotBelowTimeout {
                    window_s: *window_s,
                    timeout_s: t,
                });
            }
        }
        ServerModel::ContinuousBatching {
            replicas,
            max_batch,
            kv_capacity_tokens,
            cost,
            variability: v,
            scheduler,
            ..
        } => {
            variability(v)?;
            at_least_one("server.replicas", u64::from(*replicas))?;
            batch_limit("server.max_batch", *max_batch)?;
            at_least_one("server.kv_capacity_tokens", *kv_capacity_tokens)?;
            iteration_cost(cost)?;
            if let Some(b) = scheduler.max_batched_tokens {
                at_least_one("server.scheduler.max_batched_tokens", u64::from(b))?;
            }
            if let super::KvAllocation::Paged { block_tokens } = scheduler.kv {
                at_least_one("server.scheduler.kv.block_tokens", u64::from(block_tokens))?;
                if block_tokens > super::continuous::MAX_BLOCK_TOKENS {
                    return Err(SimError::TooLarge {
                        field: "server.scheduler.kv.block_tokens",
                        value: u64::from(block_tokens),
                        max: u64::from(super::continuous::MAX_BLOCK_TOKENS),
                    });
                }
                // A cache smaller than one block holds nothing.
                at_least_one(
                    "server.kv_capacity_tokens / block_tokens",
                    kv_capacity_tokens / u64::from(block_tokens),
                )?;
            }
        }
    }
    if let Some(t) = f.timeout_s {
        positive("timeout_s", t)?;
    }
    let servers = u64::from(f.units) * servers_per_unit(&f.server);
    if servers > MAX_SERVERS {
        return Err(SimError::FleetTooLarge {
            servers,
            max: MAX_SERVERS,
        });
    }
    Ok(())
}

/// Check a closed loop.
pub(crate) fn closed(c: &ClosedLoop) -> Result<(), SimError> {
    at_least_one("closed.clients", u64::from(c.clients))?;
    at_least_one("closed.max_requests", c.max_requests)?;
    if c.clients > MAX_SERVERS as u32 {
        return Err(SimError::TooLarge {
            field: "closed.clients",
            value: u64::from(c.clients),
            max: MAX_SERVERS,
        });
    }
    positive("closed.duration_s", c.duration_s)?;
    match c.think {
        ThinkTime::None => Ok(()),
        ThinkTime::Fixed { s } => non_negative("closed.think.s", s),
        ThinkTime::Exponential { mean_s } => non_negative("closed.think.mean_s", mean_s),
    }
}

/// Check a run.
pub(crate) fn run(r: &RunSpec) -> Result<(), SimError> {
    at_least_one("run.replications", u64::from(r.replications))?;
    for &q in &r.quantiles {
        if !(q > 0.0 && q < 1.0) {
            return Err(SimError::BadNumber {
                field: "run.quantiles".into(),
                value: q,
                valid: "must be a quantile strictly between 0 and 1",
            });
        }
    }
    non_negative("run.warmup_s", r.warmup_s)
}

/// A batch's padded attention: one entry per request size in each table, the work per key a
/// finite ratio ≥ 0, and the keys non-decreasing in the longest item (a longer batch never
/// attends over fewer).
fn batch_attention_table(a: &super::BatchAttention, sizes: usize) -> Result<(), SimError> {
    for (field, len) in [
        (
            "server.variability.batch_attention.per_key",
            a.per_key.len(),
        ),
        ("server.variability.batch_attention.keys", a.keys.len()),
    ] {
        if len != sizes {
            return Err(SimError::TableLength {
                field,
                len,
                expected: sizes,
                why: "one entry per request size of relative_work",
            });
        }
    }
    for (name, table) in [("per_key", &a.per_key), ("mean_surplus", &a.mean_surplus)] {
        for (i, &x) in table.iter().enumerate() {
            if !(x.is_finite() && (0.0..=1e6).contains(&x)) {
                return Err(SimError::BadNumber {
                    field: format!("server.variability.batch_attention.{name}[{i}]"),
                    value: x,
                    valid: "must be a finite ratio >= 0, up to 1e6",
                });
            }
        }
    }
    if let Some(i) = a.keys.windows(2).position(|w| w[1] < w[0]) {
        return Err(SimError::BadNumber {
            field: format!("server.variability.batch_attention.keys[{}]", i + 1),
            value: a.keys[i + 1] as f64,
            valid: "keys must not decrease as the batch's longest item grows",
        });
    }
    Ok(())
}
