//! Workloads: what one request costs, independent of the hardware that serves it.
//!
//! Classic models (CNNs, encoders, embedding models) cost FLOPs per item, a weight read per batch
//! and activation traffic per item. Generative models cost a prefill (compute-bound, every prompt
//! token through every weight) and one decode step per output token (memory-bound: all weights
//! plus the KV cache read per step). Presets carry their sources; a scenario may give its own
//! numbers instead.

use serde::Serialize;

use crate::cite::{Basis, Cited, Source};
use crate::hardware::Precision;

/// A classic (one forward pass per request) model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassicModel {
    pub name: String,
    /// Floating-point (or integer) operations per item \[FLOP\], counting a multiply-add as 2.
    pub flops_per_item: Cited,
    /// Parameters (weights).
    pub parameters: Cited,
    /// Activation bytes moved to and from memory per item at 1 byte per element; scaled by the
    /// precision's bytes.
    pub activation_elements_per_item: Cited,
    /// Depth: the layers a forward pass runs one after another (ResNet-50's 50, BERT-base's 12
    /// encoder layers), which a profile's `efficiency.layer_overhead_ms` charges; `None` for a
    /// custom model that does not give it.
    pub layers: Option<Cited>,
    /// The operator class that dominates the model's compute, which picks the profile's
    /// per-class compute efficiency (`efficiency.compute_conv` / `compute_matmul`); `None`: the
    /// profile's `efficiency.compute`.
    pub op_class: Option<OpClass>,
    /// How the per-item cost scales with sequence length (sequence models only).
    pub per_token: Option<PerToken>,
    /// The distribution of sequence lengths and how the runtime pads them; `None`: every item
    /// costs `flops_per_item` (the fixed length the model's numbers are given at).
    pub lengths: Option<SequenceLengths>,
}

/// The dominant operator class of a classic model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpClass {
    /// Convolutions (CNNs: ResNet-50).
    Conv,
    /// Dense matrix multiplies (transformers: BERT, embedding models).
    Matmul,
}

impl OpClass {
    pub fn label(self) -> &'static str {
        match self {
            OpClass::Conv => "conv",
            OpClass::Matmul => "matmul",
        }
    }
}

/// How a sequence model's cost grows with its length L, given at `tokens` = L0: FLOPs
/// F(L) = F0 × ((1 − q)·L/L0 + q·(L/L0)²), where the linear part is 2 × non-embedding parameters
/// per token and the quadratic part (share q at L0) is attention's QKᵀ and attention × V; the
/// activation elements likewise, with share `attention_activation_share` for the attention
/// scores (heads × L per token).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerToken {
    /// The length `flops_per_item` and `activation_elements_per_item` are given at.
    pub tokens: u32,
    /// Share of the FLOPs at `tokens` that is quadratic in the length, in [0, 1].
    pub attention_flops_share: f64,
    /// Share of the activation elements at `tokens` that is quadratic in the length, in [0, 1].
    pub attention_activation_share: f64,
}

impl PerToken {
    /// FLOPs (or activation elements) of an item of `l` tokens relative to one of `tokens`.
    fn scale(&self, l: f64, quadratic_share: f64) -> f64 {
        let x = l / self.tokens as f64;
        (1.0 - quadratic_share) * x + quadratic_share * x * x
    }
    pub fn flops_scale(&self, l: f64) -> f64 {
        self.scale(l, self.attention_flops_share)
    }
    pub fn activation_scale(&self, l: f64) -> f64 {
        self.scale(l, self.attention_activation_share)
    }
    /// The quadratic part of [`PerToken::flops_scale`] per key: an item of `l` tokens whose
    /// attention runs against `s` keys (a kernel padded to `s`) costs `flops_scale(l)` plus
    /// `attention_per_key(l) × (s − l)`.
    pub fn attention_per_key(&self, l: f64) -> f64 {
        self.per_key(l, self.attention_flops_share)
    }
    /// [`PerToken::attention_per_key`] for the activation elements (the attention scores).
    pub fn activation_per_key(&self, l: f64) -> f64 {
        self.per_key(l, self.attention_activation_share)
    }
    fn per_key(&self, l: f64, quadratic_share: f64) -> f64 {
        let l0 = self.tokens as f64;
        quadratic_share * l / (l0 * l0)
    }
}

/// How a runtime lays a variable-length item out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Padding {
    /// Every item is padded to `max` tokens (compiled shapes, as on Neuron; naive runtimes).
    Max,
    /// Variable-length kernels: an item costs its own length.
    None,
    /// Variable-length GEMMs, padded attention: an item's GEMMs cost its own length, its
    /// attention its own queries against S keys, S the smallest of
    /// [`SequenceLengths::attention_lengths`] not below the longest item of its batch — the
    /// fused-attention kernel TensorRT's variable-length BERT picks per batch. A batch cut from a
    /// length-sorted query (MLPerf Offline) has its items' own kernels; one formed in arrival
    /// order pays its longest item's.
    Batch,
}

/// The distribution of sequence lengths of a classic sequence model's requests.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum LengthDist {
    Fixed {
        tokens: u32,
    },
    /// Lognormal with this mean and CV, rounded and clamped to [1, max].
    LogNormal {
        mean: f64,
        cv: f64,
    },
    /// Each listed length equally likely.
    Empirical {
        tokens: Vec<u32>,
    },
}

/// Sequence lengths of a classic workload: their distribution, the longest, and the padding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SequenceLengths {
    pub dist: LengthDist,
    /// Longest sequence (longer ones are truncated to it), and the padded length of `Max`.
    pub max: u32,
    pub padding: Padding,
    /// The key lengths attention kernels are compiled for, ascending, the last at least `max`
    /// (`Padding::Batch` only; empty otherwise).
    pub attention_lengths: Vec<u32>,
    /// Take each request's length from the replayed trace's input-token column when it has one.
    pub from_trace: bool,
    /// Batches are cut from a length-sorted query (MLPerf Offline harnesses), so under
    /// `Padding::Batch` each item pays only its own kernel; false: batches form in arrival order.
    pub sorted: bool,
}

impl SequenceLengths {
    /// Probability of each length 1..=max (index 0 is length 1), summing to 1: the lengths the
    /// simulator draws and the planner averages over.
    pub fn pmf(&self) -> Vec<f64> {
        let n = self.max.max(1) as usize;
        let mut p = vec![0.0; n];
        let at = |l: u32| (l.clamp(1, self.max.max(1)) - 1) as usize;
        match &self.dist {
            LengthDist::Fixed { tokens } => p[at(*tokens)] = 1.0,
            LengthDist::Empirical { tokens } => {
                for &t in tokens {
                    p[at(t)] += 1.0 / tokens.len().max(1) as f64;
                }
            }
            LengthDist::LogNormal { mean, cv } => {
                // P(round(X) = k) for X lognormal; the tails beyond [1, max] clamp to the ends.
                let (mu, sigma) = lognormal_params(*mean, *cv);
                let cdf = |x: f64| {
                    if x <= 0.0 {
                        0.0
                    } else {
                        // Φ((ln x − μ)/σ), in the arithmetic it always had (bit-identical plans).
                        0.5 * statrs::function::erf::erfc(
                            -(x.ln() - mu) / (sigma * std::f64::consts::SQRT_2),
                        )
                    }
                };
                let mut below = 0.0;
                for (i, slot) in p.iter_mut().enumerate() {
                    let upper = if i + 1 == n { 1.0 } else { cdf(i as f64 + 1.5) };
                    *slot = upper - below;
                    below = upper;
                }
            }
        }
        p
    }

    /// The length an item is charged for: its own, or `max` when padded.
    pub fn charged(&self, l: u32) -> u32 {
        match self.padding {
            Padding::Max => self.max,
            Padding::None | Padding::Batch => l.clamp(1, self.max),
        }
    }

    /// The keys a batch whose longest item has `longest` tokens attends over: the smallest
    /// attention length not below it under `Padding::Batch` (`longest` itself past the last);
    /// `longest` otherwise.
    pub fn attention_keys(&self, longest: u32) -> u32 {
        match self.padding {
            Padding::Batch => self
                .attention_lengths
                .iter()
                .copied()
                .find(|&s| s >= longest)
                .unwrap_or(longest),
            Padding::Max | Padding::None => longest,
        }
    }
}

/// Draws sequence lengths from a [`SequenceLengths`]' probabilities: a uniform draw looked up in
/// the cumulative table, so the draws follow exactly the distribution the planner averages over.
#[derive(Debug, Clone)]
pub struct LengthSampler {
    cumulative: Vec<f64>,
}

impl LengthSampler {
    pub fn new(lengths: &SequenceLengths) -> Self {
        let mut acc = 0.0;
        let cumulative = lengths
            .pmf()
            .iter()
            .map(|p| {
                acc += p;
                acc
            })
            .collect();
        LengthSampler { cumulative }
    }

    /// One length, 1..=max.
    pub fn draw<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        let u: f64 =
            rand::RngExt::random::<f64>(rng) * self.cumulative.last().copied().unwrap_or(1.0);
        let i = self.cumulative.partition_point(|&c| c <= u);
        (i.min(self.cumulative.len().saturating_sub(1)) + 1) as u32
    }
}

/// The mean padded-attention work of a batch of b items drawn independently from `pmf` (in the
/// units of `per_key`), for b = 1..=`max_batch`: an item of length t in a batch whose longest is
/// M pays `per_key[t] × (keys[M] − keys[t])`, so with G(m) = F(m)^(b−1) the CDF of the longest
/// of the other b − 1, its mean is `Σ_t p_t per_key[t] Σ_{m>t} (keys[m] − keys[t]) dG(m)`.
fn mean_padding_surplus(pmf: &[f64], per_key: &[f64], keys: &[u32], max_batch: u32) -> Vec<f64> {
    let n = pmf.len().min(per_key.len()).min(keys.len());
    let mut cdf = Vec::with_capacity(n);
    let mut acc = 0.0;
    for &p in &pmf[..n] {
        acc += p;
        cdf.push(acc.min(1.0));
    }
    // G(m) for the current b, starting from b = 1 (no other item: G = 1).
    let mut g = vec![1.0; n];
    let mut out = Vec::with_capacity(max_batch as usize);
    for b in 1..=max_batch.max(1) {
        if b > 1 {
            for (gi, f) in g.iter_mut().zip(&cdf) {
                *gi *= f;
            }
        }
        // Suffix sums over m > t of keys[m]·dG(m) and dG(m), dG(m) = G(m) − G(m − 1).
        let (mut above_keys, mut above) = (0.0, 0.0);
        let mut surplus = 0.0;
        for t in (0..n).rev() {
            if pmf[t] > 0.0 {
                let k = keys[t] as f64;
                surplus += pmf[t] * per_key[t] * (above_keys - k * above);
            }
            let dg = g[t] - if t == 0 { 0.0 } else { g[t - 1] };
            above_keys += keys[t] as f64 * dg;
            above += dg;
        }
        out.push(surplus.max(0.0));
    }
    out
}

impl ClassicModel {
    /// Scale factors (FLOPs, activations) of an item of `l` tokens against the model's figures,
    /// its attention padded to its own kernel under `Padding::Batch` (the item's batch-longest
    /// taken as itself: a length-sorted batch).
    fn scales(&self, l: u32) -> (f64, f64) {
        let Some(pt) = &self.per_token else {
            return (1.0, 1.0);
        };
        let (f, a) = (pt.flops_scale(l as f64), pt.activation_scale(l as f64));
        match &self.lengths {
            Some(lens) if lens.padding == Padding::Batch => {
                let pad = lens.attention_keys(l).saturating_sub(l) as f64;
                (
                    f + pt.attention_per_key(l as f64) * pad,
                    a + pt.activation_per_key(l as f64) * pad,
                )
            }
            _ => (f, a),
        }
    }

    /// Mean FLOPs and activation elements per item over the length distribution, at the
    /// charged (padded) length; the model's own figures without a distribution.
    pub fn mean_item_cost(&self) -> (f64, f64) {
        let (f0, a0) = (
            self.flops_per_item.value,
            self.activation_elements_per_item.value,
        );
        let Some(lens) = &self.lengths else {
            return (f0, a0);
        };
        let (mut f, mut a) = (0.0, 0.0);
        for (i, p) in lens.pmf().iter().enumerate() {
            if *p > 0.0 {
                let (sf, sa) = self.scales(lens.charged(i as u32 + 1));
                f += p * sf;
                a += p * sa;
            }
        }
        (f0 * f, a0 * a)
    }

    /// The attention work per key of an item of each length 1..=max, in the units of
    /// [`ClassicModel::relative_work_by_length`], the keys a batch attends over by its longest
    /// item, and the mean of that padding over arrival-order batches of 1..=`max_batch` items:
    /// what such a batch pays beyond its items' own kernels under `Padding::Batch`; `None`
    /// otherwise (and for a length-sorted query).
    pub fn batch_attention(&self, max_batch: u32) -> Option<BatchAttention> {
        let lens = self.lengths.as_ref()?;
        let pt = self.per_token.as_ref()?;
        if lens.padding != Padding::Batch || lens.sorted {
            return None;
        }
        let (mean, _) = self.mean_item_cost();
        let f0 = self.flops_per_item.value;
        let per_key: Vec<f64> = (1..=lens.max)
            .map(|l| f0 * pt.attention_per_key(l as f64) / mean)
            .collect();
        let keys: Vec<u32> = (1..=lens.max).map(|l| lens.attention_keys(l)).collect();
        let mean_surplus = mean_padding_surplus(&lens.pmf(), &per_key, &keys, max_batch);
        Some(BatchAttention {
            per_key,
            keys,
            mean_surplus,
        })
    }

    /// Work of an item of each length 1..=max relative to the mean item (FLOPs ratio; mean 1
    /// over the distribution); `None` without a distribution, or when padding makes every item
    /// cost the same.
    pub fn relative_work_by_length(&self) -> Option<Vec<f64>> {
        let lens = self.lengths.as_ref()?;
        if lens.padding == Padding::Max || self.per_token.is_none() {
            return None;
        }
        let (mean, _) = self.mean_item_cost();
        let f0 = self.flops_per_item.value;
        Some(
            (1..=lens.max)
                .map(|l| f0 * self.scales(lens.charged(l)).0 / mean)
                .collect(),
        )
    }
}

/// What a batch formed in arrival order pays for padded attention (`Padding::Batch`): an item
/// of t tokens in a batch whose longest has m does its own work plus
/// `per_key[t − 1] × (keys[m − 1] − keys[t − 1])`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchAttention {
    /// Attention work per key of an item of 1, 2, … tokens, relative to the mean item.
    pub per_key: Vec<f64>,
    /// The keys a batch attends over when its longest item has 1, 2, … tokens.
    pub keys: Vec<u32>,
    /// The mean of that padding per item over batches of 1, 2, … items in arrival order, which
    /// the planned batch times already include: a batch's drawn size is divided by
    /// 1 + this, so its mean time stays the planned one.
    pub mean_surplus: Vec<f64>,
}

impl BatchAttention {
    /// The mean padding a planned batch of `b` items holds (the last entry beyond the table).
    pub fn planned(&self, b: usize) -> f64 {
        self.mean_surplus
            .get(b.max(1) - 1)
            .or(self.mean_surplus.last())
            .copied()
            .unwrap_or(0.0)
    }
}

/// Whether `lengths` can be a runtime's attention kernels for sequences up to `max` tokens:
/// ascending, the last at least `max`.
pub fn attention_lengths_cover(lengths: &[u32], max: u32) -> bool {
    lengths.windows(2).all(|p| p[0] < p[1]) && lengths.last().is_some_and(|&l| l >= max)
}

/// A decoder-only generative model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GenerativeModel {
    pub name: String,
    pub parameters: Cited,
    pub layers: Cited,
    pub hidden_size: Cited,
    pub kv_heads: Cited,
    pub head_dim: Cited,
}

impl GenerativeModel {
    /// KV-cache bytes per token of context, the cache held in `kv` (see [`kv_precision`]):
    /// 2 (K and V) × layers × kv_heads × head_dim × bytes.
    pub fn kv_bytes_per_token(&self, kv: Precision) -> f64 {
        2.0 * self.layers.value * self.kv_heads.value * self.head_dim.value * kv.bytes()
    }

    /// FLOPs to push one token through the weights: 2 × parameters (Kaplan et al. 2020, §2.1).
    pub fn flops_per_token(&self) -> f64 {
        2.0 * self.parameters.value
    }

    /// Attention FLOPs of one query–key pair over the whole model: the QKᵀ logit (2·d_attn
    /// FLOPs per layer) and the weighted sum of V (2·d_attn), with d_attn = query heads ×
    /// head_dim = `hidden_size` — 4 × layers × hidden per pair (Hoffmann et al., "Training
    /// Compute-Optimal Large Language Models", arXiv:2203.15556, 2022, Appendix F; Kaplan et al.
    /// 2020, Table 1, count the logits alone as 2·n_layer·n_ctx·d_attn per token). A token at
    /// context c attends to c pairs, so a decode step grows linearly with context and a prefill
    /// quadratically with the prompt ([`crate::sim::attention_pairs`]).
    pub fn attention_flops_per_pair(&self) -> f64 {
        4.0 * self.layers.value * self.hidden_size.value
    }
}

/// The KV cache's element type: `configured` (a tier's `kv_cache_precision`) when given, else
/// 16-bit unless the weights are fp32 — serving engines' default: int8/fp8 weight quantisation
/// leaves the cache in the activations' bf16 unless it is configured otherwise (vLLM
/// `--kv-cache-dtype auto`: "the model's data type"; TensorRT-LLM without `kv_cache_dtype`).
pub fn kv_precision(weights: Precision, configured: Option<Precision>) -> Precision {
    configured.unwrap_or(if weights == Precision::Fp32 {
        Precision::Fp32
    } else {
        Precision::Fp16
    })
}

/// How many tokens a generative request has, when not taken from a replayed trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum TokenCount {
    Fixed {
        tokens: u32,
    },
    /// Lognormal with this mean and coefficient of variation, clamped to [1, max].
    LogNormal {
        mean: f64,
        cv: f64,
        max: u32,
    },
}

impl TokenCount {
    pub fn mean(&self) -> f64 {
        match self {
            TokenCount::Fixed { tokens } => *tokens as f64,
            TokenCount::LogNormal { mean, .. } => *mean,
        }
    }

    /// The mean of [`TokenCount::draw`] (its rounding and its floor at 1 neglected): the fixed
    /// count, or the lognormal's mean less what the clamp at `max` cuts off,
    /// E[min(X, max)] = mean·Φ((ln max − μ − σ²)/σ) + max·(1 − Φ((ln max − μ)/σ)).
    pub fn drawn_mean(&self) -> f64 {
        match self {
            TokenCount::Fixed { tokens } => f64::from((*tokens).max(1)),
            TokenCount::LogNormal { mean, cv, max } => {
                let (mu, s) = lognormal_params(*mean, *cv);
                let m = f64::from(*max).ln();
                mean * std_normal_cdf((m - mu - s * s) / s)
                    + f64::from(*max) * (1.0 - std_normal_cdf((m - mu) / s))
            }
        }
    }

    /// A lognormal of this CV, clamped to `max`, whose draws keep `mean` ([`drawn_mean`]
    /// equals it): the distribution before the clamp has a slightly larger mean, found by
    /// fixed-point iteration. For a measured mean (one that already went through the clamp).
    ///
    /// [`drawn_mean`]: TokenCount::drawn_mean
    pub fn lognormal_keeping_mean(mean: f64, cv: f64, max: u32) -> TokenCount {
        let mut before = mean;
        for _ in 0..50 {
            let d = TokenCount::LogNormal {
                mean: before,
                cv,
                max,
            }
            .drawn_mean();
            if !(d.is_finite() && d > 0.0) {
                break;
            }
            before *= mean / d;
        }
        TokenCount::LogNormal {
            mean: before,
            cv,
            max,
        }
    }

    /// One request's count: the fixed count (at least 1), or a lognormal draw of this mean and
    /// CV (σ² = ln(1 + cv²), μ = ln(mean) − σ²/2), rounded and clamped to [1, max].
    pub fn draw<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        match self {
            TokenCount::Fixed { tokens } => (*tokens).max(1),
            TokenCount::LogNormal { mean, cv, max } => {
                let (mu, s) = lognormal_params(*mean, *cv);
                match rand_distr::LogNormal::new(mu, s) {
                    Ok(d) => {
                        (rand_distr::Distribution::sample(&d, rng).round() as u32).clamp(1, *max)
                    }
                    Err(_) => mean.round() as u32,
                }
            }
        }
    }
}

/// (μ, σ) of the lognormal with this mean and coefficient of variation: σ² = ln(1 + cv²),
/// μ = ln(mean) − σ²/2.
fn lognormal_params(mean: f64, cv: f64) -> (f64, f64) {
    let s2 = (1.0 + cv * cv).ln();
    (mean.ln() - s2 / 2.0, s2.sqrt())
}

/// Φ(z), the standard normal CDF.
fn std_normal_cdf(z: f64) -> f64 {
    0.5 * statrs::function::erf::erfc(-z / std::f64::consts::SQRT_2)
}

/// What one request costs.
// One value per scenario, built once: the size difference of the variants costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Workload {
    Classic {
        model: ClassicModel,
        precision: Precision,
    },
    Generative {
        model: GenerativeModel,
        precision: Precision,
        prompt_tokens: TokenCount,
        output_tokens: TokenCount,
        /// Take token counts per request from the replayed trace when it has them.
        tokens_from_trace: bool,
    },
}

impl Workload {
    /// Whether this is a generative model (prefill, then decode steps), not a classic one.
    pub fn is_generative(&self) -> bool {
        matches!(self, Workload::Generative { .. })
    }

    /// The mean prompt and output token counts, rounded (output at least 1), of a generative
    /// workload; (0, 0) for a classic one. The fixed-size requests a latency curve or a
    /// calibration point is simulated with.
    pub fn mean_tokens(&self) -> (u32, u32) {
        match self {
            Workload::Generative {
                prompt_tokens,
                output_tokens,
                ..
            } => (
                prompt_tokens.mean().round() as u32,
                output_tokens.mean().round().max(1.0) as u32,
            ),
            Workload::Classic { .. } => (0, 0),
        }
    }

    pub fn precision(&self) -> Precision {
        match self {
            Workload::Classic { precision, .. } | Workload::Generative { precision, .. } => {
                *precision
            }
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Workload::Classic { model, .. } => &model.name,
            Workload::Generative { model, .. } => &model.name,
        }
    }

    /// Weight bytes at a precision \[B\].
    pub fn weight_bytes(&self, p: Precision) -> f64 {
        match self {
            Workload::Classic { model, .. } => model.parameters.value * p.bytes(),
            Workload::Generative { model, .. } => model.parameters.value * p.bytes(),
        }
    }

    /// Every number of the workload with its name, for the assumptions table.
    pub fn cited_numbers(&self) -> Vec<(String, &Cited)> {
        match self {
            Workload::Classic { model, .. } => vec![
                ("flops_per_item".into(), &model.flops_per_item),
                ("parameters".into(), &model.parameters),
                (
                    "activation_elements_per_item".into(),
                    &model.activation_elements_per_item,
                ),
            ]
            .into_iter()
            .chain(model.layers.iter().map(|l| ("layers".into(), l)))
            .collect(),
            Workload::Generative { model, .. } => vec![
                ("parameters".into(), &model.parameters),
                ("layers".into(), &model.layers),
                ("hidden_size".into(), &model.hidden_size),
                ("kv_heads".into(), &model.kv_heads),
                ("head_dim".into(), &model.head_dim),
            ],
        }
    }
}

impl Workload {
    /// The number [`Workload::cited_numbers`] names `field`, to change (the uncertainty
    /// analysis sets sampled values).
    pub fn number_mut(&mut self, field: &str) -> Option<&mut Cited> {
        match self {
            Workload::Classic { model, .. } => match field {
                "flops_per_item" => Some(&mut model.flops_per_item),
                "parameters" => Some(&mut model.parameters),
                "activation_elements_per_item" => Some(&mut model.activation_elements_per_item),
                "layers" => model.layers.as_mut(),
                _ => None,
            },
            Workload::Generative { model, .. } => match field {
                "parameters" => Some(&mut model.parameters),
                "layers" => Some(&mut model.layers),
                "hidden_size" => Some(&mut model.hidden_size),
                "kv_heads" => Some(&mut model.kv_heads),
                "head_dim" => Some(&mut model.head_dim),
                _ => None,
            },
        }
    }
}

fn src(key: &str, title: &str, url: &str, date: &str) -> Source {
    Source {
        key: key.into(),
        title: title.into(),
        url: (!url.is_empty()).then(|| url.into()),
        date: date.into(),
    }
}

fn cited(value: f64, source: &Source) -> Cited {
    Cited {
        log_sd: None,
        value,
        basis: Basis::Cited,
        source: source.clone(),
        note: None,
    }
}

fn derived(value: f64, source: &Source, note: &str) -> Cited {
    Cited {
        log_sd: None,
        value,
        basis: Basis::Derived,
        source: source.clone(),
        note: Some(note.into()),
    }
}

fn estimate(value: f64, source: &Source, note: &str) -> Cited {
    Cited {
        log_sd: None,
        value,
        basis: Basis::Estimate,
        source: source.clone(),
        note: Some(note.into()),
    }
}

/// Names of the classic presets.
pub const CLASSIC_PRESETS: [&str; 4] = ["resnet-50", "bert-base", "bert-large", "all-minilm-l6-v2"];
/// Names of the generative presets.
pub const GENERATIVE_PRESETS: [&str; 5] = [
    "llama-3-8b",
    "llama-2-70b",
    "llama-2-7b",
    "llama-2-13b",
    "mistral-7b",
];

/// A classic preset by name. Sequence models are given at sequence length 128, with the
/// attention share of their FLOPs and activations at that length (from the arithmetic in each
/// note) so [`ClassicModel::mean_item_cost`] can price other lengths.
pub fn classic_preset(name: &str) -> Option<ClassicModel> {
    let resnet = src(
        "he-2016",
        "He et al., 'Deep Residual Learning for Image Recognition', CVPR 2016, Table 1 (ResNet-50: 50 layers, 3.8e9 multiply-adds at 224x224)",
        "https://arxiv.org/abs/1512.03385",
        "2016",
    );
    let torchvision = src(
        "torchvision-resnet50",
        "PyTorch torchvision model card, resnet50: 25,557,032 parameters, 4.09 GFLOPS (multiply-adds) at 224x224",
        "https://pytorch.org/vision/stable/models/generated/torchvision.models.resnet50.html",
        "2023",
    );
    let bert = src(
        "devlin-2019",
        "Devlin et al., 'BERT: Pre-training of Deep Bidirectional Transformers', NAACL 2019, §3 (BERT-base: L=12, H=768, 110M parameters; BERT-large: L=24, H=1024, 340M)",
        "https://arxiv.org/abs/1810.04805",
        "2019",
    );
    let minilm = src(
        "minilm-card",
        "sentence-transformers/all-MiniLM-L6-v2 model card: 6 layers, hidden 384, 22.7M parameters",
        "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2",
        "2021",
    );
    let m = match name {
        "resnet-50" => ClassicModel {
            name: "ResNet-50 (224x224)".into(),
            flops_per_item: derived(
                8.18e9,
                &torchvision,
                "2 FLOP per multiply-add x 4.09e9 multiply-adds",
            ),
            parameters: cited(25.557e6, &torchvision),
            activation_elements_per_item: estimate(
                1.1e7,
                &resnet,
                "sum of the output feature maps of the 53 conv layers at 224x224 (~11M elements), read and written once each; caches absorb part of it",
            ),
            layers: Some(cited(50.0, &resnet)),
            op_class: Some(OpClass::Conv),
            per_token: None,
            lengths: None,
        },
        "bert-base" => ClassicModel {
            name: "BERT-base (sequence 128)".into(),
            flops_per_item: derived(
                2.26e10,
                &bert,
                "2 x 85M non-embedding parameters x 128 tokens = 21.8 GFLOP, + attention 2 x 12 layers x 2 x 128^2 x 768 = 0.6 GFLOP",
            ),
            parameters: cited(110e6, &bert),
            activation_elements_per_item: derived(
                1.2e7,
                &bert,
                "12 layers x 128 tokens x (4 x 768 + 3072 + 12 heads x 128) ~ 1.2e7 elements",
            ),
            layers: Some(cited(12.0, &bert)),
            op_class: Some(OpClass::Matmul),
            per_token: Some(PerToken {
                tokens: 128,
                attention_flops_share: 0.6 / 22.4,
                attention_activation_share: 1536.0 / 7680.0,
            }),
            lengths: None,
        },
        "bert-large" => ClassicModel {
            name: "BERT-large (sequence 128)".into(),
            flops_per_item: derived(
                7.9e10,
                &bert,
                "2 x 302M non-embedding parameters x 128 tokens = 77.3 GFLOP, + attention 2 x 24 x 2 x 128^2 x 1024 = 1.6 GFLOP",
            ),
            parameters: cited(340e6, &bert),
            activation_elements_per_item: derived(
                3.2e7,
                &bert,
                "24 layers x 128 tokens x (4 x 1024 + 4096 + 16 heads x 128) ~ 3.2e7 elements",
            ),
            layers: Some(cited(24.0, &bert)),
            op_class: Some(OpClass::Matmul),
            per_token: Some(PerToken {
                tokens: 128,
                attention_flops_share: 1.6 / 78.9,
                attention_activation_share: 2048.0 / 10240.0,
            }),
            lengths: None,
        },
        "all-minilm-l6-v2" => ClassicModel {
            name: "all-MiniLM-L6-v2 embedding (sequence 128)".into(),
            flops_per_item: derived(
                2.9e9,
                &minilm,
                "2 x 10.6M non-embedding parameters (6 x (4 x 384^2 + 2 x 384 x 1536)) x 128 tokens = 2.7 GFLOP, + attention 2 x 6 x 2 x 128^2 x 384 = 0.15 GFLOP",
            ),
            parameters: cited(22.7e6, &minilm),
            activation_elements_per_item: derived(
                1.5e6,
                &minilm,
                "6 layers x 128 tokens x (4 x 384 + 1536 + 12 heads x 128) ~ 1.5e6 elements",
            ),
            layers: Some(cited(6.0, &minilm)),
            op_class: Some(OpClass::Matmul),
            per_token: Some(PerToken {
                tokens: 128,
                attention_flops_share: 0.15 / 2.85,
                attention_activation_share: 1536.0 / 4608.0,
            }),
            lengths: None,
        },
        _ => return None,
    };
    Some(m)
}

/// A generative preset by name.
pub fn generative_preset(name: &str) -> Option<GenerativeModel> {
    // Display name; parameters, layers, hidden size, KV heads, head dim; their source.
    let (display, [parameters, layers, hidden_size, kv_heads, head_dim], source) = match name {
        "llama-3-8b" => (
            "Llama-3-8B",
            [8.03e9, 32.0, 4096.0, 8.0, 128.0],
            src(
                "llama3-card",
                "Meta Llama 3 8B config.json and model card: 32 layers, hidden 4096, 8 KV heads, head dim 128, 8.03B parameters",
                "https://huggingface.co/meta-llama/Meta-Llama-3-8B",
                "2024-04",
            ),
        ),
        "llama-2-70b" => (
            "Llama-2-70B",
            [68.98e9, 80.0, 8192.0, 8.0, 128.0],
            src(
                "touvron-2023",
                "Touvron et al., 'Llama 2: Open Foundation and Fine-Tuned Chat Models', 2023, Table 1 and §2.2 (70B: 80 layers, hidden 8192, GQA with 8 KV heads, head dim 128)",
                "https://arxiv.org/abs/2307.09288",
                "2023-07",
            ),
        ),
        "llama-2-7b" => (
            "Llama-2-7B",
            [6.738e9, 32.0, 4096.0, 32.0, 128.0],
            src(
                "llama2-7b-config",
                "Meta Llama 2 7B, config.json of meta-llama/Llama-2-7b-hf: 32 layers, hidden 4096, 32 attention heads and 32 KV heads (no grouped-query attention below 70B, Touvron et al. 2023 §2.2), head dim 128; 6,738,415,616 parameters (the checkpoint's count)",
                "https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json",
                "2023-07",
            ),
        ),
        "llama-2-13b" => (
            "Llama-2-13B",
            [13.016e9, 40.0, 5120.0, 40.0, 128.0],
            src(
                "llama2-13b-config",
                "Meta Llama 2 13B, config.json of meta-llama/Llama-2-13b-hf: 40 layers, hidden 5120, 40 attention heads and 40 KV heads, head dim 128; 13,015,864,320 parameters (the checkpoint's count)",
                "https://huggingface.co/meta-llama/Llama-2-13b-hf/blob/main/config.json",
                "2023-07",
            ),
        ),
        "mistral-7b" => (
            "Mistral-7B",
            [7.242e9, 32.0, 4096.0, 8.0, 128.0],
            src(
                "jiang-2023",
                "Jiang et al., 'Mistral 7B', 2023, Table 1: 32 layers, dim 4096, head dim 128, 32 heads, 8 KV heads, sliding window 4,096 (not modelled: attention reads the whole context), context 8,192; 7,241,732,096 parameters (mistralai/Mistral-7B-v0.1's count)",
                "https://arxiv.org/abs/2310.06825",
                "2023-10",
            ),
        ),
        _ => return None,
    };
    let c = |v: f64| cited(v, &source);
    Some(GenerativeModel {
        name: display.into(),
        parameters: c(parameters),
        layers: c(layers),
        hidden_size: c(hidden_size),
        kv_heads: c(kv_heads),
        head_dim: c(head_dim),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `drawn_mean` is the mean of `draw`: the clamp's cut taken off a lognormal's mean, and
    /// nothing off when the clamp is far out.
    #[test]
    fn drawn_mean_is_the_mean_of_the_draws() {
        use rand::SeedableRng;
        let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(7);
        let clamped = TokenCount::LogNormal {
            mean: 290.0,
            cv: 0.78,
            max: 1024,
        };
        let n = 200_000;
        let sum: u64 = (0..n).map(|_| u64::from(clamped.draw(&mut rng))).sum();
        let empirical = sum as f64 / n as f64;
        let expected = clamped.drawn_mean();
        assert!(expected < 290.0 && expected > 280.0, "{expected}");
        assert!(
            (empirical / expected - 1.0).abs() < 0.005,
            "{empirical} vs {expected}"
        );
        let far = TokenCount::LogNormal {
            mean: 290.0,
            cv: 0.78,
            max: 1_000_000,
        };
        assert!((far.drawn_mean() - 290.0).abs() < 1e-6);
        assert_eq!(TokenCount::Fixed { tokens: 0 }.drawn_mean(), 1.0);
        let kept = TokenCount::lognormal_keeping_mean(290.0, 0.78, 1024);
        assert!((kept.drawn_mean() - 290.0).abs() < 1e-6, "{kept:?}");
        assert!(kept.mean() > 290.0, "{kept:?}");
    }

    #[test]
    fn kv_cache_per_token_matches_hand_arithmetic() {
        let l3 = generative_preset("llama-3-8b").unwrap();
        // 2 x 32 x 8 x 128 x 2 B = 131,072 B = 128 KiB per token in bf16.
        assert_eq!(
            l3.kv_bytes_per_token(kv_precision(Precision::Fp16, None)),
            131_072.0
        );
        let l2 = generative_preset("llama-2-70b").unwrap();
        assert_eq!(
            l2.kv_bytes_per_token(kv_precision(Precision::Int8, None)),
            327_680.0
        );
        assert_eq!(l2.flops_per_token(), 2.0 * 68.98e9);
    }

    #[test]
    fn every_preset_exists_and_is_cited() {
        for n in CLASSIC_PRESETS {
            let m = classic_preset(n).unwrap();
            let w = Workload::Classic {
                model: m,
                precision: Precision::Int8,
            };
            for (f, c) in w.cited_numbers() {
                assert!(c.value > 0.0 && !c.source.date.is_empty(), "{n} {f}");
            }
        }
        for n in GENERATIVE_PRESETS {
            let m = generative_preset(n).unwrap();
            // One KV head per query head below 70B in Llama 2; grouped 4:1 in Mistral.
            let heads = m.hidden_size.value / m.head_dim.value;
            assert!(m.kv_heads.value <= heads, "{n}");
            assert!(
                m.parameters.value > 1e9 && !m.layers.source.date.is_empty(),
                "{n}"
            );
        }
        // 2 x 32 layers x 32 heads x 128 x 2 B = 512 KiB per token: Llama 2 7B has no GQA.
        let l7 = generative_preset("llama-2-7b").unwrap();
        assert_eq!(
            l7.kv_bytes_per_token(kv_precision(Precision::Fp16, None)),
            524_288.0
        );
        assert!(classic_preset("resnet-51").is_none());
    }

    #[test]
    fn weight_bytes_follow_precision() {
        let w = Workload::Classic {
            model: classic_preset("resnet-50").unwrap(),
            precision: Precision::Int8,
        };
        assert_eq!(w.weight_bytes(Precision::Int8), 25.557e6);
        assert_eq!(w.weight_bytes(Precision::Fp32), 4.0 * 25.557e6);
    }
}
