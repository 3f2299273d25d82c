//! Model prices, to put a cost on a stored session whose agent did not report one (the
//! `sessions` feature).
//!
//! A price is US dollars per million tokens, for each kind of token a model bills: input,
//! output, input read from the prompt cache, input written to it. The bundled table
//! ([`PriceTable::bundled`]) is documented, with its sources, in `docs/sessions.md`; a JSON file
//! can replace or add entries ([`PriceTable::merge_json`]):
//!
//! ```
//! use harness_agents::prices::{PriceTable, Tokens};
//!
//! let mut table = PriceTable::bundled();
//! table.merge_json(r#"{"my-model": {"input": 1.0, "output": 2.0}}"#)?;
//! let tokens = Tokens { input: 1_000_000, output: 500_000, ..Tokens::default() };
//! assert_eq!(table.cost("my-model-2026-01-01", &tokens), Some(2.0));
//! assert_eq!(table.cost("nobody-knows", &tokens), None);
//! # Ok::<(), serde_json::Error>(())
//! ```

use serde::{Deserialize, Serialize};

use harness_agents_core::stored::Accounting;
/// Token counts of one model's use (the core's, which the stored-session decoders fill).
pub use harness_agents_core::stored::Tokens;

/// What a model costs, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// Input tokens (not cached).
    pub input: f64,
    /// Output tokens (reasoning included).
    pub output: f64,
    /// Input tokens read from the prompt cache; by default a tenth of `input`.
    #[serde(default)]
    pub cache_read: Option<f64>,
    /// Input tokens written to the prompt cache; by default 1.25 times `input`.
    #[serde(default)]
    pub cache_write: Option<f64>,
}

/// Model name prefixes and their prices. A model is priced by the longest entry that is its
/// name or a prefix of it followed by `-` (`claude-sonnet-4-5-20250929` by `claude-sonnet-4-5`;
/// `gpt-5.5` not by `gpt-5`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    entries: Vec<(String, Price)>,
}

/// One bundled entry: name prefix, input, output, cache read, cache write.
type Bundled = (&'static str, f64, f64, Option<f64>, Option<f64>);

/// The bundled prices: name prefix, input, output, cache read, cache write (per million).
/// Sources and dates: `docs/sessions.md`, "Price table".
const BUNDLED: &[Bundled] = &[
    // Anthropic, public list prices.
    ("claude-opus-4-5", 5.0, 25.0, None, None),
    ("claude-opus-4-1", 15.0, 75.0, None, None),
    ("claude-opus-4", 15.0, 75.0, None, None),
    ("claude-sonnet-4-5", 3.0, 15.0, None, None),
    ("claude-sonnet-4", 3.0, 15.0, None, None),
    ("claude-3-7-sonnet", 3.0, 15.0, None, None),
    ("claude-3-5-sonnet", 3.0, 15.0, None, None),
    ("claude-haiku-4-5", 1.0, 5.0, None, None),
    ("claude-3-5-haiku", 0.8, 4.0, None, None),
    // The prices Claude Code 2.1.332 itself reports for these models (the recorded fixtures'
    // `modelUsage.costUSD`).
    ("claude-opus-5-5", 4.0, 20.0, None, None),
    ("claude-sonnet-5-5", 2.0, 10.0, None, None),
    ("claude-haiku-5-5", 0.1, 0.5, None, None),
    // OpenAI, public list prices (cached input at a tenth; no cache writes billed).
    ("gpt-5-codex", 1.25, 10.0, Some(0.125), Some(0.0)),
    ("gpt-5-mini", 0.25, 2.0, Some(0.025), Some(0.0)),
    ("gpt-5-nano", 0.05, 0.4, Some(0.005), Some(0.0)),
    ("gpt-5", 1.25, 10.0, Some(0.125), Some(0.0)),
    ("o4-mini", 1.1, 4.4, Some(0.275), Some(0.0)),
    ("o3", 2.0, 8.0, Some(0.5), Some(0.0)),
    ("gpt-4.1", 2.0, 8.0, Some(0.5), Some(0.0)),
];

impl PriceTable {
    /// An empty table: nothing can be priced.
    pub fn empty() -> Self {
        PriceTable::default()
    }

    /// The bundled table.
    pub fn bundled() -> Self {
        let entries = BUNDLED
            .iter()
            .map(|&(name, input, output, cache_read, cache_write)| {
                let price = Price {
                    input,
                    output,
                    cache_read,
                    cache_write,
                };
                (name.to_string(), price)
            })
            .collect();
        PriceTable { entries }
    }

    /// Adds or replaces entries from a JSON object `{"prefix": {"input": .., "output": ..,
    /// "cache_read"?: .., "cache_write"?: ..}}`.
    pub fn merge_json(&mut self, text: &str) -> Result<(), serde_json::Error> {
        let more: std::collections::BTreeMap<String, Price> = serde_json::from_str(text)?;
        for (name, price) in more {
            self.set(&name, price);
        }
        Ok(())
    }

    /// Adds or replaces the price of a name prefix.
    pub fn set(&mut self, prefix: &str, price: Price) {
        match self.entries.iter_mut().find(|(name, _)| name == prefix) {
            Some(entry) => entry.1 = price,
            None => self.entries.push((prefix.to_string(), price)),
        }
    }

    /// The price of `model`: the entry with the longest prefix of its name.
    pub fn price(&self, model: &str) -> Option<&Price> {
        self.entries
            .iter()
            .filter(|(name, _)| {
                model
                    .strip_prefix(name.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
            })
            .max_by_key(|(name, _)| name.len())
            .map(|(_, price)| price)
    }

    /// What `tokens` of `model` cost in US dollars, rounded to 1e-9 (the table's precision);
    /// `None` when the model has no price.
    pub fn cost(&self, model: &str, tokens: &Tokens) -> Option<f64> {
        let price = self.price(model)?;
        let cache_read = price.cache_read.unwrap_or(price.input * 0.1);
        let cache_write = price.cache_write.unwrap_or(price.input * 1.25);
        let micro = tokens.input as f64 * price.input
            + tokens.output as f64 * price.output
            + tokens.cache_read as f64 * cache_read
            + tokens.cache_write as f64 * cache_write;
        Some(round_cost(micro / 1_000_000.0))
    }
}

impl PriceTable {
    /// The priced cost of a session's tokens; `None` when a model with tokens has no price.
    pub fn session_cost(&self, accounting: &Accounting) -> Option<f64> {
        let mut total = 0.0;
        for (model, tokens) in &accounting.models {
            if *tokens == Tokens::default() {
                continue;
            }
            total += self.cost(model, tokens)?;
        }
        Some(round_cost(total))
    }
}

/// Rounds a cost to nine decimals, so that sums of the same figures print the same.
pub fn round_cost(cost: f64) -> f64 {
    (cost * 1e9).round() / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_prefix_wins_and_unknown_models_have_no_price() {
        let table = PriceTable::bundled();
        let sonnet = table.price("claude-sonnet-4-5-20250929").map(|p| p.input);
        assert_eq!(sonnet, Some(3.0));
        let five = table.price("gpt-5-codex-high").map(|p| p.output);
        assert_eq!(five, Some(10.0));
        assert_eq!(table.price("gpt-6"), None);
        assert_eq!(table.price("gpt-5.5"), None);
        assert_eq!(PriceTable::empty().price("gpt-5"), None);
    }

    /// The recorded Claude Code's own figures: 360 input and 90 output tokens of
    /// `claude-opus-5-5` cost 0.00324 USD; 120/30 of `claude-sonnet-5-5` 0.00054.
    #[test]
    fn the_bundled_table_reproduces_the_recorded_costs() {
        let table = PriceTable::bundled();
        let t = |input, output| Tokens {
            input,
            output,
            ..Tokens::default()
        };
        assert_eq!(table.cost("claude-opus-5-5", &t(360, 90)), Some(0.00324));
        assert_eq!(table.cost("claude-opus-5-5", &t(240, 31)), Some(0.00158));
        assert_eq!(table.cost("claude-sonnet-5-5", &t(120, 30)), Some(0.00054));
        assert_eq!(table.cost("claude-haiku-5-5", &t(120, 30)), Some(0.000027));
        let cached = Tokens {
            cache_read: 1_000_000,
            cache_write: 1_000_000,
            ..Tokens::default()
        };
        assert_eq!(table.cost("claude-sonnet-4", &cached), Some(0.3 + 3.75));
        assert_eq!(table.cost("gpt-5", &cached), Some(0.125));
    }

    #[test]
    fn a_file_overrides_and_adds_prices() {
        let mut table = PriceTable::bundled();
        table
            .merge_json(r#"{"gpt-5": {"input": 2, "output": 4, "cache_read": 1}, "x": {"input": 1, "output": 1}}"#)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(table.price("gpt-5").map(|p| p.input), Some(2.0));
        assert_eq!(table.price("x-1").map(|p| p.output), Some(1.0));
        assert!(table.merge_json(r#"{"y": {"input": "free"}}"#).is_err());
    }
}
