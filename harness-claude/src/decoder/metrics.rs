//! The `result` line: the error it may report (C7) and the outcome's figures (O2).

use super::*;

/// Token figures of one result (O2).
#[derive(Debug, Clone, Default)]
pub(super) struct Tokens {
    pub(super) input: Option<Number>,
    pub(super) output: Option<Number>,
    pub(super) cache_read: Option<Number>,
    pub(super) cache_creation: Option<Number>,
}

impl ClaudeDecoder {
    pub(super) fn on_result(
        &mut self,
        line: &ResultFields<'_>,
        parent: &Thread,
        out: &mut Emitter<'_>,
    ) {
        let subtype = line.subtype.as_str();
        let is_error = line.is_error.is_true() || subtype.is_some_and(|s| s.starts_with("error"));

        out.final_output(line.result.as_str().map(std::sync::Arc::from));
        self.structured_output = line.structured_output.clone();
        if let Some(models) = line.model_usage.as_ref().filter(|m| !m.is_empty()) {
            let mut tokens = Tokens::default();
            for (_, model) in models {
                add_opt(&mut tokens.input, number(&model.input));
                add_opt(&mut tokens.output, number(&model.output));
                add_opt(&mut tokens.cache_read, number(&model.cache_read));
                add_opt(&mut tokens.cache_creation, number(&model.cache_creation));
            }
            self.model_tokens = Some(tokens);
        }
        self.usage_tokens = Tokens {
            input: number(&line.usage.input),
            output: number(&line.usage.output),
            cache_read: number(&line.usage.cache_read),
            cache_creation: number(&line.usage.cache_creation),
        };
        self.total_cost_usd = number(&line.total_cost_usd);
        self.duration_api_ms = number(&line.duration_api_ms);
        add_opt(&mut self.duration_ms, number(&line.duration_ms));
        add_opt(&mut self.num_turns, number(&line.num_turns));

        if is_error {
            out.fail();
            let errors = line
                .errors
                .iter()
                .filter(|s| !s.is_empty())
                .map(|s| s.as_ref())
                .collect::<Vec<_>>()
                .join("\n");
            let message = match line.result.non_empty_str() {
                Some(text) => text.to_string(),
                None if !errors.is_empty() => errors,
                None => subtype.unwrap_or("error").to_string(),
            };
            out.emit_in(EventBody::Error { message }, parent.clone());
        }
    }

    pub(super) fn metrics(&self) -> Metrics {
        let tokens = self
            .model_tokens
            .clone()
            .unwrap_or_else(|| self.usage_tokens.clone());
        let mut metrics = Metrics::default();
        metrics.input_tokens = tokens.input;
        metrics.output_tokens = tokens.output;
        metrics.cache_read_input_tokens = tokens.cache_read;
        metrics.cache_creation_input_tokens = tokens.cache_creation;
        metrics.total_cost_usd = self.total_cost_usd.clone();
        metrics.duration_api_ms = self.duration_api_ms.clone();
        metrics.duration_ms = self.duration_ms.clone();
        metrics.num_turns = self.num_turns.clone();
        metrics
    }
}

/// A figure, when it is a number (O2: booleans and strings are ignored).
pub(super) fn number(value: &Loose<'_>) -> Option<Number> {
    match value {
        Loose::Number(n) => Some(n.clone()),
        _ => None,
    }
}

pub(super) fn add_opt(total: &mut Option<Number>, n: Option<Number>) {
    if let Some(n) = n {
        *total = Some(match total.take() {
            Some(t) => add_numbers(&t, &n),
            None => n,
        });
    }
}
