//! `[model]` and `[rerank]`: which model API, which model, and its limits.

use serde::{Deserialize, Serialize};

/// Which model API.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// No network, no key: answers the inbox itself.
    #[default]
    Offline,
    /// Anthropic's Messages API.
    Anthropic,
    /// Any OpenAI-compatible Chat Completions API.
    Openai,
}

impl ProviderKind {
    /// The name as `hearth.toml` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Offline => "offline",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Openai => "openai",
        }
    }
}

/// `[model]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModelConfig {
    /// Which API (`offline`, `anthropic`, `openai`).
    pub provider: ProviderKind,
    /// The model's name at that API.
    pub model: String,
    /// The API's base URL; empty: the provider's own.
    pub base_url: String,
    /// The variable holding the key; empty: the provider's usual one.
    pub api_key_env: String,
    /// The most tokens one answer may use.
    pub max_tokens: u32,
    /// Bound on connecting, the first byte, and each read of a stream.
    pub timeout_s: u64,
    /// Anthropic extended thinking's token budget; 0: off.
    pub thinking_tokens: u32,
    /// The request field for the answer's token limit: `max_tokens` or
    /// `max_completion_tokens`; empty: by the model's name (OpenAI's
    /// reasoning models, `o1`, `o3`, `o4`, `gpt-5`…, take the second).
    pub max_tokens_field: String,
    /// A model that gets one try when `model` refuses; empty: none.
    pub fallback_model: String,
    /// The model's context window in tokens; 0: known for the shipped
    /// models, else 200,000.
    pub context_tokens: u64,
    /// Retries of a failed call (429, 5xx, 529, connection errors).
    pub max_retries: u32,
    /// First wait between retries; doubles each time (capped at 8 s).
    pub retry_base_ms: u64,
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig {
            provider: ProviderKind::Offline,
            model: String::new(),
            base_url: String::new(),
            api_key_env: String::new(),
            max_tokens: 4096,
            timeout_s: 120,
            thinking_tokens: 0,
            max_tokens_field: String::new(),
            fallback_model: String::new(),
            context_tokens: 0,
            max_retries: 2,
            retry_base_ms: 500,
        }
    }
}

/// Empty keys fall back to `[model]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RerankConfig {
    /// The rerank provider; none: `[model]`'s.
    pub provider: Option<ProviderKind>,
    /// The rerank model; empty: `[model]`'s.
    pub model: String,
}
