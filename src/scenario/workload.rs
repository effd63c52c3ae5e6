//! Validation of a scenario's `[workload]` table into a [`Workload`]: a shipped preset, or a
//! custom classic or generative model with its numbers cited to the scenario (or to the
//! `source` the table gives), plus the token counts of a generative request. Called by
//! [`super::Scenario::from_source`] before traffic and tiers, which need the workload.

use toml::Spanned;

use super::file::{SequenceTokensFile, WorkloadFile};
use super::{user_cited, whole};
use crate::cite::Cited;
use crate::hardware::Precision;
use crate::input::{InputError, NumberCheck, SourceFile, closest};
use crate::workload::{
    self, ClassicModel, GenerativeModel, LengthDist, OpClass, Padding, PerToken, SequenceLengths,
    TokenCount, Workload, attention_lengths_cover,
};

/// Validate `[workload]`: a preset, or a custom classic or generative model.
pub(super) fn validate(src: &SourceFile, w: &WorkloadFile) -> Result<Workload, InputError> {
    let precision = *w.precision.get_ref();
    let num = |v: &Option<Spanned<f64>>, field: &str| -> Result<Option<Cited>, InputError> {
        v.as_ref()
            .map(|s| {
                let (max, valid) = model_bound(field);
                let x = NumberCheck { source: src, field }.range(
                    s,
                    Some(0.0),
                    true,
                    Some(max),
                    valid,
                )?;
                Ok(user_cited(src, s, x, w.source.as_ref()))
            })
            .transpose()
    };
    // `layers` alone may describe a classic model's depth; the other three are generative only.
    let generative_keys = [&w.hidden_size, &w.kv_heads, &w.head_dim];
    let is_generative_custom = generative_keys.iter().any(|k| k.is_some());
    if let Some(preset) = &w.preset {
        let p = preset.get_ref().as_str();
        if let Some(mut model) = workload::classic_preset(p) {
            reject_extra(src, w, false)?;
            if let Some(k) = &w.item_tokens {
                return Err(src
                    .error(
                        k,
                        "workload.item_tokens",
                        "a preset already fixes this number",
                    )
                    .with_help("remove `preset` to describe a custom model, or remove this key"));
            }
            if let Some(k) = &w.op_class {
                return Err(src
                    .error(
                        k,
                        "workload.op_class",
                        "a preset already fixes its operator class",
                    )
                    .with_help("remove `preset` to describe a custom model, or remove this key"));
            }
            model.lengths = sequence_lengths(src, w, model.per_token.as_ref())?;
            return Ok(Workload::Classic { model, precision });
        }
        if let Some(model) = workload::generative_preset(p) {
            reject_extra(src, w, true)?;
            reject_sequence_keys(src, w)?;
            return generative(src, w, model, precision);
        }
        let all: Vec<&str> = workload::CLASSIC_PRESETS
            .iter()
            .chain(workload::GENERATIVE_PRESETS.iter())
            .copied()
            .collect();
        let help = match closest(p, &all) {
            Some(b) => format!("did you mean `{b}`? presets: {}", all.join(", ")),
            None => format!(
                "presets: {}; or omit `preset` and give the model's numbers",
                all.join(", ")
            ),
        };
        return Err(src
            .error(
                preset,
                "workload.preset",
                format!("unknown workload preset `{p}`"),
            )
            .with_help(help));
    }
    let name = w.name.clone().unwrap_or_else(|| "custom model".into());
    if is_generative_custom {
        let need = |v: &Option<Spanned<f64>>, field: &str| -> Result<Cited, InputError> {
            num(v, field)?.ok_or_else(|| {
                src.error_at(None, field, "missing for a custom generative model")
                    .with_help("a generative model needs parameters, layers, hidden_size, kv_heads and head_dim")
            })
        };
        let model = GenerativeModel {
            name,
            parameters: need(&w.parameters, "workload.parameters")?,
            layers: need(&w.layers, "workload.layers")?,
            hidden_size: need(&w.hidden_size, "workload.hidden_size")?,
            kv_heads: need(&w.kv_heads, "workload.kv_heads")?,
            head_dim: need(&w.head_dim, "workload.head_dim")?,
        };
        reject_sequence_keys(src, w)?;
        return generative(src, w, model, precision);
    }
    let need = |v: &Option<Spanned<f64>>, field: &str| -> Result<Cited, InputError> {
        num(v, field)?.ok_or_else(|| {
            src.error_at(None, field, "missing for a custom model")
                .with_help(format!(
                    "give `preset` (one of {}) or flops_per_item, parameters and activation_elements_per_item",
                    workload::CLASSIC_PRESETS.join(", ")
                ))
        })
    };
    reject_token_keys(src, w)?;
    let op_class = match &w.op_class {
        None => None,
        Some(c) => Some(match c.get_ref().as_str() {
            "conv" => OpClass::Conv,
            "matmul" => OpClass::Matmul,
            other => {
                return Err(src
                    .error(
                        c,
                        "workload.op_class",
                        format!("unknown operator class `{other}`"),
                    )
                    .with_help("valid: \"conv\" (CNNs) or \"matmul\" (transformers)"));
            }
        }),
    };
    // A custom model's cost is taken as linear in its length (no attention share): give
    // `item_tokens` to let it vary with `sequence_tokens`.
    let per_token = match &w.item_tokens {
        None => None,
        Some(t) => Some(PerToken {
            tokens: whole(src, t, "workload.item_tokens", 1, 1_000_000)?,
            attention_flops_share: 0.0,
            attention_activation_share: 0.0,
        }),
    };
    let mut model = ClassicModel {
        name,
        flops_per_item: need(&w.flops_per_item, "workload.flops_per_item")?,
        parameters: need(&w.parameters, "workload.parameters")?,
        activation_elements_per_item: need(
            &w.activation_elements_per_item,
            "workload.activation_elements_per_item",
        )?,
        layers: num(&w.layers, "workload.layers")?,
        op_class,
        per_token,
        lengths: None,
    };
    model.lengths = sequence_lengths(src, w, model.per_token.as_ref())?;
    Ok(Workload::Classic { model, precision })
}

/// Longest sequence a classic model accepts \[tokens\]: far beyond any encoder's context
/// (BERT 512, long-context encoders 8,192), small enough that the per-length table stays small.
pub const MAX_SEQUENCE_TOKENS: i64 = 131_072;

/// The sequence-length keys of a classic workload, or `None` when none is given (every item
/// costs the model's figures, as before lengths existed). A key without effect is refused: the
/// lengths need a model whose cost scales with length (`per_token`).
fn sequence_lengths(
    src: &SourceFile,
    w: &WorkloadFile,
    per_token: Option<&PerToken>,
) -> Result<Option<SequenceLengths>, InputError> {
    let Some(seq_spanned) = &w.sequence_tokens else {
        if let Some(m) = &w.max_sequence_tokens {
            return Err(src
                .error(m, "workload.max_sequence_tokens", "needs `sequence_tokens`")
                .with_help("give sequence_tokens (a length, { mean, cv } or { values = [...] })"));
        }
        if let Some(p) = &w.padding {
            return Err(src
                .error(p, "workload.padding", "needs `sequence_tokens`")
                .with_help("give sequence_tokens (a length, { mean, cv } or { values = [...] })"));
        }
        if let Some(a) = &w.attention_lengths {
            return Err(src
                .error(a, "workload.attention_lengths", "needs `sequence_tokens`")
                .with_help("give sequence_tokens (a length, { mean, cv } or { values = [...] })"));
        }
        if let Some(t) = &w.sequence_from_trace {
            return Err(src
                .error(t, "workload.sequence_from_trace", "needs `sequence_tokens`")
                .with_help(
                    "give sequence_tokens: the lengths of requests the trace does not size",
                ));
        }
        return Ok(None);
    };
    let seq = seq_spanned.get_ref();
    // The parts of the value are checked at the value's own position.
    let span = seq_spanned.span();
    let Some(per_token) = per_token else {
        return Err(src
            .error_at(None, "workload.sequence_tokens", "this model's cost does not depend on a sequence length")
            .with_help("sequence lengths apply to bert-base, bert-large, all-minilm-l6-v2, or a custom model with `item_tokens`"));
    };
    let max = match &w.max_sequence_tokens {
        Some(m) => whole(
            src,
            m,
            "workload.max_sequence_tokens",
            1,
            MAX_SEQUENCE_TOKENS,
        )?,
        None => per_token.tokens.max(match seq {
            SequenceTokensFile::Fixed(t) => (*t).clamp(1, MAX_SEQUENCE_TOKENS) as u32,
            _ => per_token.tokens,
        }),
    };
    let length = |v: &Spanned<i64>, field: &str| {
        whole(src, v, field, 1, max as i64).map_err(|e| {
            e.with_help(format!(
                "valid: a whole number of tokens from 1 to max_sequence_tokens = {max}"
            ))
        })
    };
    let dist = match seq {
        SequenceTokensFile::Fixed(t) => LengthDist::Fixed {
            tokens: length(&Spanned::new(span.clone(), *t), "workload.sequence_tokens")?,
        },
        SequenceTokensFile::LogNormal(l) => {
            let mean = NumberCheck {
                source: src,
                field: "workload.sequence_tokens.mean",
            }
            .range(
                &Spanned::new(span.clone(), l.mean),
                Some(1.0),
                false,
                Some(max as f64),
                "a mean length from 1 to max_sequence_tokens",
            )?;
            let cv = NumberCheck {
                source: src,
                field: "workload.sequence_tokens.cv",
            }
            .range(
                &Spanned::new(span.clone(), l.cv),
                Some(0.0),
                false,
                Some(10.0),
                "0 (fixed) up to 10",
            )?;
            if cv == 0.0 {
                LengthDist::Fixed {
                    tokens: mean.round() as u32,
                }
            } else {
                LengthDist::LogNormal { mean, cv }
            }
        }
        SequenceTokensFile::Empirical(v) => {
            if v.values.is_empty() || v.values.len() > 1_000_000 {
                return Err(src
                    .error(
                        seq_spanned,
                        "workload.sequence_tokens.values",
                        "needs 1 to 1,000,000 lengths",
                    )
                    .with_help("list measured sequence lengths, e.g. values = [112, 171, 384]"));
            }
            let mut tokens = Vec::with_capacity(v.values.len());
            for &t in &v.values {
                if !(1..=max as i64).contains(&t) {
                    return Err(src
                        .error(
                            seq_spanned,
                            "workload.sequence_tokens.values",
                            format!("length {t} is out of range"),
                        )
                        .with_help(format!(
                            "valid: whole numbers of tokens from 1 to max_sequence_tokens = {max}"
                        )));
                }
                tokens.push(t as u32);
            }
            LengthDist::Empirical { tokens }
        }
    };
    let padding = match &w.padding {
        None => Padding::None,
        Some(p) => match p.get_ref().as_str() {
            "max" => Padding::Max,
            "none" => Padding::None,
            "batch" => Padding::Batch,
            other => {
                return Err(src
                    .error(p, "workload.padding", format!("unknown padding `{other}`"))
                    .with_help("valid: \"max\" (every item padded to max_sequence_tokens: compiled shapes, naive runtimes), \"none\" (variable-length kernels) or \"batch\" (variable-length GEMMs, attention padded to the batch's longest item, as TensorRT's BERT)"));
            }
        },
    };
    let attention_lengths = attention_lengths(src, w, padding, max)?;
    Ok(Some(SequenceLengths {
        dist,
        max,
        padding,
        attention_lengths,
        from_trace: w.sequence_from_trace.as_ref().is_some_and(|b| *b.get_ref()),
        // A served tier batches its requests as they arrive.
        sorted: false,
    }))
}

/// The attention kernels' key lengths of `padding = "batch"`: ascending whole numbers, the last
/// covering `max_sequence_tokens`; none (the batch's longest item exactly) when not given. The
/// key means nothing under another padding, so it is refused there.
fn attention_lengths(
    src: &SourceFile,
    w: &WorkloadFile,
    padding: Padding,
    max: u32,
) -> Result<Vec<u32>, InputError> {
    let Some(a) = &w.attention_lengths else {
        return Ok(Vec::new());
    };
    let field = "workload.attention_lengths";
    if padding != Padding::Batch {
        return Err(src
            .error(a, field, "has no effect unless padding = \"batch\"")
            .with_help("set padding = \"batch\", or remove attention_lengths"));
    }
    let v = a.get_ref();
    let lengths: Vec<u32> = v
        .iter()
        .filter(|t| (1..=MAX_SEQUENCE_TOKENS).contains(*t))
        .map(|&t| t as u32)
        .collect();
    if lengths.len() != v.len() || !attention_lengths_cover(&lengths, max) {
        return Err(src
            .error(a, field, "must be ascending whole numbers of tokens, the last at least max_sequence_tokens")
            .with_help(format!(
                "valid: e.g. [128, 192, 256, 384] (TensorRT's BERT kernels), each from 1 to {MAX_SEQUENCE_TOKENS}, the last >= max_sequence_tokens = {max}"
            )));
    }
    Ok(lengths)
}

/// Sequence-length keys describe a classic sequence model; a generative request's size is its
/// token counts.
fn reject_sequence_keys(src: &SourceFile, w: &WorkloadFile) -> Result<(), InputError> {
    let help = "a generative request's size is prompt_tokens / output_tokens (token_cv for spread)";
    let spans: [(&str, Option<std::ops::Range<usize>>); 7] = [
        (
            "max_sequence_tokens",
            w.max_sequence_tokens.as_ref().map(|v| v.span()),
        ),
        ("padding", w.padding.as_ref().map(|v| v.span())),
        (
            "attention_lengths",
            w.attention_lengths.as_ref().map(|v| v.span()),
        ),
        (
            "sequence_from_trace",
            w.sequence_from_trace.as_ref().map(|v| v.span()),
        ),
        ("item_tokens", w.item_tokens.as_ref().map(|v| v.span())),
        ("op_class", w.op_class.as_ref().map(|v| v.span())),
        ("sequence_tokens", None),
    ];
    for (k, span) in spans {
        let given = k != "sequence_tokens" && span.is_some()
            || k == "sequence_tokens" && w.sequence_tokens.is_some();
        if given {
            return Err(src
                .error_at(
                    span,
                    format!("workload.{k}"),
                    "applies only to classic models",
                )
                .with_help(help));
        }
    }
    Ok(())
}

/// The largest value of each number of a custom model, and the range in words. Each is far
/// beyond any published model, so a real one always fits; the bound stops a typo (1e308) from
/// reaching the roofline and printing "inf ms".
pub(super) fn model_bound(field: &str) -> (f64, &'static str) {
    match field {
        // GPT-4-class models are estimated near 2e12 parameters: ×50.
        "workload.parameters" => (1e14, "a number > 0, up to 1e14 parameters"),
        // A forward pass costs ~2 FLOP per parameter: 2e14 for the largest model per token or
        // item; ×5000 leaves room for long inputs.
        "workload.flops_per_item" => (1e18, "a number > 0, up to 1e18 FLOP per item"),
        // A 4K image through a large CNN keeps ~1e9 activations: ×1000.
        "workload.activation_elements_per_item" => {
            (1e12, "a number > 0, up to 1e12 elements per item")
        }
        // The deepest published transformers have under 200 layers.
        "workload.layers" => (10_000.0, "a number > 0, up to 10,000 layers"),
        // Hidden sizes of the largest models are ~25,000.
        "workload.hidden_size" => (1e6, "a number > 0, up to 1,000,000"),
        "workload.kv_heads" => (10_000.0, "a number > 0, up to 10,000 heads"),
        "workload.head_dim" => (100_000.0, "a number > 0, up to 100,000"),
        _ => (1e18, "a number > 0, up to 1e18"),
    }
}

/// A preset fixes the model's numbers; giving them too is a contradiction, not an override.
fn reject_extra(src: &SourceFile, w: &WorkloadFile, generative: bool) -> Result<(), InputError> {
    let model_keys = [
        ("flops_per_item", &w.flops_per_item),
        ("parameters", &w.parameters),
        (
            "activation_elements_per_item",
            &w.activation_elements_per_item,
        ),
        ("layers", &w.layers),
        ("hidden_size", &w.hidden_size),
        ("kv_heads", &w.kv_heads),
        ("head_dim", &w.head_dim),
    ];
    for (k, v) in model_keys {
        if let Some(v) = v {
            return Err(src
                .error(
                    v,
                    format!("workload.{k}"),
                    "a preset already fixes this number",
                )
                .with_help("remove `preset` to describe a custom model, or remove this key"));
        }
    }
    if !generative {
        reject_token_keys(src, w)?;
    }
    Ok(())
}

/// Token counts and their spread describe a generative request; on a classic model they would be
/// read and then ignored, so they are refused (a key that has no effect is rejected, never
/// ignored). A classic model's request-to-request spread is the profile's or tier's
/// `service_cv`.
fn reject_token_keys(src: &SourceFile, w: &WorkloadFile) -> Result<(), InputError> {
    let help = |k: &str| {
        format!(
            "`{k}` is for a generative model (llama-3-8b, llama-2-70b, llama-2-7b, llama-2-13b, mistral-7b or custom); a classic model's request-to-request spread is the tier's `service_cv` (or the profile's efficiency.service_cv)"
        )
    };
    for (k, v) in [
        ("prompt_tokens", &w.prompt_tokens),
        ("output_tokens", &w.output_tokens),
        ("token_cv", &w.token_cv),
    ] {
        if let Some(v) = v {
            return Err(src
                .error(
                    v,
                    format!("workload.{k}"),
                    "token counts apply only to generative models",
                )
                .with_help(help(k)));
        }
    }
    if let Some(m) = &w.max_tokens {
        return Err(src
            .error(
                m,
                "workload.max_tokens",
                "token counts apply only to generative models",
            )
            .with_help(help("max_tokens")));
    }
    if w.tokens_from_trace.is_some() {
        return Err(src
            .error_at(
                None,
                "workload.tokens_from_trace",
                "token counts apply only to generative models",
            )
            .with_help(help("tokens_from_trace")));
    }
    Ok(())
}

fn generative(
    src: &SourceFile,
    w: &WorkloadFile,
    model: GenerativeModel,
    precision: Precision,
) -> Result<Workload, InputError> {
    let tokens = |v: &Option<Spanned<f64>>, field: &str, default: f64| -> Result<f64, InputError> {
        match v {
            Some(s) => NumberCheck { source: src, field }.range(
                s,
                Some(1.0),
                false,
                Some(1e6),
                "tokens from 1 to 1,000,000",
            ),
            None => Ok(default),
        }
    };
    let prompt = tokens(&w.prompt_tokens, "workload.prompt_tokens", 1024.0)?;
    let output = tokens(&w.output_tokens, "workload.output_tokens", 256.0)?;
    let cv = match &w.token_cv {
        Some(s) => NumberCheck {
            source: src,
            field: "workload.token_cv",
        }
        .range(s, Some(0.0), false, Some(10.0), "0 (fixed) up to 10")?,
        None => 0.0,
    };
    let max = match &w.max_tokens {
        Some(m) => whole(src, m, "workload.max_tokens", 1, 1_000_000)?,
        None => 32_768,
    };
    let count = |mean: f64| {
        if cv == 0.0 {
            TokenCount::Fixed {
                tokens: mean.round() as u32,
            }
        } else {
            TokenCount::LogNormal { mean, cv, max }
        }
    };
    Ok(Workload::Generative {
        model,
        precision,
        prompt_tokens: count(prompt),
        output_tokens: count(output),
        tokens_from_trace: w.tokens_from_trace.unwrap_or(true),
    })
}
