//! Validation of a scenario's `[workload]` table into a [`Workload`]: a shipped preset, or a
//! custom classic or generative model with its numbers cited to the scenario (or to the
//! `source` the table gives), plus the token counts of a generative request. Called by
//! [`super::Scenario::from_source`] before traffic and tiers, which need the workload.

use toml::Spanned;

use super::file::WorkloadFile;
use super::{user_cited, whole};
use crate::cite::Cited;
use crate::hardware::Precision;
use crate::input::{InputError, NumberCheck, SourceFile, closest};
use crate::workload::{self, ClassicModel, GenerativeModel, TokenCount, Workload};

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
    let generative_keys = [&w.layers, &w.hidden_size, &w.kv_heads, &w.head_dim];
    let is_generative_custom = generative_keys.iter().any(|k| k.is_some());
    if let Some(preset) = &w.preset {
        let p = preset.get_ref().as_str();
        if let Some(model) = workload::classic_preset(p) {
            reject_extra(src, w, false)?;
            return Ok(Workload::Classic { model, precision });
        }
        if let Some(model) = workload::generative_preset(p) {
            reject_extra(src, w, true)?;
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
    let model = ClassicModel {
        name,
        flops_per_item: need(&w.flops_per_item, "workload.flops_per_item")?,
        parameters: need(&w.parameters, "workload.parameters")?,
        activation_elements_per_item: need(
            &w.activation_elements_per_item,
            "workload.activation_elements_per_item",
        )?,
    };
    Ok(Workload::Classic { model, precision })
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
            "`{k}` is for llama-3-8b, llama-2-70b or a custom generative model; a classic model's request-to-request spread is the tier's `service_cv` (or the profile's efficiency.service_cv)"
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
