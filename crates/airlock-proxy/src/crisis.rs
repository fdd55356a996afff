//! The crisis route (seeds 001 and 003): a request from a person who may be in crisis is never
//! blocked or delayed. It goes to the trusted model (`proxy.scan.crisis_model`, else the crisis
//! response's first trusted model, else the requested one) with the crisis system text first,
//! in the person's language (safety question, resources, never methods), and the answer starts
//! with the safety question and the resources. Under attack (`CRISIS_UNDER_ATTACK`: a crisis
//! wrapped in an attempt to override instructions) the agent's own system prompt, its other
//! messages and its tools are removed: only the crisis system text and the person's messages
//! are sent, and only the policy's crisis support tools stay callable.
//!
//! The input is one per-request [`CrisisInput`] (this request's scan; a session's crisis state
//! can supply the same), so where the crisis was noticed does not matter here.

use std::borrow::Cow;

use airlock_shield::{CrisisResponse, Guidance};
use serde_json::{Value, json};

use super::Proxy;

/// Why a request takes the crisis route.
#[derive(Debug, Clone)]
pub struct CrisisInput {
    /// The person's words, for their language.
    pub text: String,
    /// The crisis came wrapped in an attack: strip the agent's template.
    pub under_attack: bool,
}

/// What the route did to a request.
#[derive(Debug, Clone)]
pub struct Routed {
    /// The answer starts with this (safety question, message, resources).
    pub prefix: String,
    pub guidance: Guidance,
    /// The model the request now names.
    pub model: Option<String>,
    /// Messages and tools removed under attack.
    pub removed_messages: usize,
    pub removed_tools: usize,
}

/// Fields through which a request offers tools or forces a call.
const TOOL_FIELDS: [&str; 4] = ["tools", "tool_choice", "functions", "function_call"];

impl Proxy {
    /// The crisis response in force: the operator's (`proxy.scan.crisis_response`), else the
    /// scanner's.
    pub fn crisis_response(&self) -> Option<Cow<'_, CrisisResponse>> {
        if let Some(r) = &self.config.crisis_response {
            return Some(Cow::Borrowed(r.as_ref()));
        }
        airlock_shield::builtin()
            .ok()
            .map(|s| Cow::Borrowed(s.crisis_response()))
    }

    /// The model a request in crisis goes to, if one is set.
    pub fn trusted_model(&self) -> Option<String> {
        self.config.crisis_model.clone().or_else(|| {
            self.crisis_response()
                .and_then(|r| r.trusted_models.first().cloned())
        })
    }

    /// What `airlock serve` and `airlock proxy` print at start: the crisis route in force and,
    /// when no trusted model is set, a warning (the agent's own model then answers a person in
    /// crisis, with the crisis system text).
    pub fn crisis_route_lines(&self) -> Vec<String> {
        let langs = self
            .crisis_response()
            .map(|r| r.languages().join(", "))
            .unwrap_or_default();
        let source = if self.config.crisis_response.is_some() {
            "the operator's crisis response"
        } else {
            "the built-in crisis response"
        };
        if !self.config.scan {
            return vec![
                "WARNING: inbound scanning is off (proxy.scan.disabled), so no crisis is noticed and there is no crisis route".into(),
            ];
        }
        match self.trusted_model() {
            Some(m) => vec![format!(
                "crisis route: the trusted model `{m}` answers a person in crisis, with the crisis system text ({source}; languages {langs}); under attack it gets only that text and the person's messages"
            )],
            None => vec![
                format!(
                    "crisis route: the agent's own model answers a person in crisis, with the crisis system text ({source}; languages {langs})"
                ),
                "WARNING: no trusted model is set for a person in crisis: set proxy.scan.crisis_model (or trusted_models in the crisis response); see docs/crisis.md".into(),
            ],
        }
    }

    /// Rewrites `doc` for the crisis route; see the module documentation. `support` says
    /// whether a tool is one of the policy's crisis support tools.
    pub fn route_crisis(
        &self,
        doc: &mut Value,
        input: &CrisisInput,
        support: impl Fn(&str) -> bool,
    ) -> Option<Routed> {
        let response = self.crisis_response()?;
        let guidance = response.for_text(&input.text);
        let system = response.system_text(&guidance, input.under_attack);
        let model = self.trusted_model();
        let obj = doc.as_object_mut()?;
        if let Some(m) = &model {
            obj.insert("model".into(), Value::String(m.clone()));
        }
        let mut removed_messages = 0;
        let mut removed_tools = 0;
        if input.under_attack {
            if let Some(messages) = obj.get_mut("messages").and_then(Value::as_array_mut) {
                let before = messages.len();
                messages.retain(|m| m.get("role").and_then(Value::as_str) == Some("user"));
                removed_messages = before - messages.len();
            }
            let kept: Vec<Value> = obj
                .get("tools")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|t| {
                    t.get("function")
                        .and_then(|f| f.get("name"))
                        .and_then(Value::as_str)
                        .is_some_and(&support)
                })
                .cloned()
                .collect();
            removed_tools = obj
                .get("tools")
                .and_then(Value::as_array)
                .map_or(0, |t| t.len() - kept.len())
                + obj
                    .get("functions")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
            for f in TOOL_FIELDS {
                obj.remove(f);
            }
            if !kept.is_empty() {
                obj.insert("tools".into(), Value::Array(kept));
            } else {
                obj.remove("parallel_tool_calls");
            }
        }
        if let Some(messages) = obj.get_mut("messages").and_then(Value::as_array_mut) {
            messages.insert(0, json!({"role": "system", "content": system}));
        }
        Some(Routed {
            prefix: guidance.text(),
            guidance,
            model,
            removed_messages,
            removed_tools,
        })
    }
}
