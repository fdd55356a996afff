//! The outbound privacy filter: before a request goes upstream, every string value of its JSON
//! (message texts, tool-call arguments, system prompts: anything the remote model reads) is
//! scanned with airlock-privacy. A secret is replaced one way by `[SECRET:<rule>#n]`, or the
//! request is refused, as configured; personal data (when turned on) gets `[PII:<rule>#n]`
//! placeholders that exist for this request only and are restored in its answer, streamed
//! answers included. Each filtered request is a receipt with the rule ids and salted hashes of
//! the values, never the values. Only a request that changes is rebuilt: the other strings
//! keep their bytes.

use std::collections::BTreeMap;

use airlock_confirm::Origin;
use airlock_privacy::{Kind, Restorer, Scanner, Selection, StreamRestorer, Vault};
use axum::body::Bytes;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::Proxy;
use super::gate::Who;
use airlock_gateway::ApiError;

/// What to do with a secret in a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SecretAction {
    /// Replace it with a typed placeholder (the default).
    Placeholder,
    /// Refuse the request (400 `SECRET_IN_REQUEST`).
    Refuse,
    /// Send it as it is.
    Off,
}

/// What to do with personal data in a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PersonalAction {
    /// Replace it for the request and restore it in the answer.
    Placeholder,
    /// Send it as it is (the default).
    Off,
}

/// `[proxy.privacy]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrivacySettings {
    pub secrets: Option<SecretAction>,
    pub personal: Option<PersonalAction>,
    /// Rule ids (`rules/privacy/*.toml`) not run.
    #[serde(default)]
    pub off: Vec<String>,
}

/// The filter as used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrivacyConfig {
    pub secrets: SecretAction,
    pub personal: PersonalAction,
    pub off: Vec<String>,
}

impl Default for PrivacyConfig {
    fn default() -> Self {
        PrivacyConfig {
            secrets: SecretAction::Placeholder,
            personal: PersonalAction::Off,
            off: Vec::new(),
        }
    }
}

impl PrivacyConfig {
    pub fn from_settings(s: &PrivacySettings) -> PrivacyConfig {
        let d = PrivacyConfig::default();
        PrivacyConfig {
            secrets: s.secrets.unwrap_or(d.secrets),
            personal: s.personal.unwrap_or(d.personal),
            off: s.off.clone(),
        }
    }
}

/// The compiled filter a proxy holds. Its receipts are the broker's
/// (`airlock_confirm::privacy`: the salted hashes, one salt per process for every surface).
#[derive(Debug)]
pub struct Filter {
    scanner: Scanner,
    secrets: SecretAction,
}

/// Requests whose strings add up to more than this are scanned off the I/O threads.
const INLINE_BYTES: usize = 256 * 1024;

impl Filter {
    /// The filter for `c`; `None` when it has nothing to do.
    pub fn new(c: &PrivacyConfig) -> Result<Option<Filter>, String> {
        let selection = Selection {
            secrets: c.secrets != SecretAction::Off,
            personal: c.personal == PersonalAction::Placeholder,
            off: c.off.clone(),
        };
        if !selection.secrets && !selection.personal {
            return Ok(None);
        }
        let scanner = Scanner::builtin(&selection).map_err(|e| e.to_string())?;
        Ok(Some(Filter {
            scanner,
            secrets: c.secrets,
        }))
    }

    /// `body` (valid JSON) with every finding in its string values replaced, and the vault of
    /// what was replaced; `None` for the body when nothing was.
    pub fn filter_json(&self, body: &[u8]) -> Result<(Option<Vec<u8>>, Vault), String> {
        let mut vault = Vault::new();
        let mut out: Option<Vec<u8>> = None;
        let mut copied = 0;
        for s in strings(body) {
            let raw = &body[s.start..s.end];
            let text: std::borrow::Cow<str> = if raw[1..raw.len() - 1].contains(&b'\\') {
                std::borrow::Cow::Owned(
                    serde_json::from_slice::<String>(raw).map_err(|e| e.to_string())?,
                )
            } else {
                std::borrow::Cow::Borrowed(
                    std::str::from_utf8(&raw[1..raw.len() - 1]).map_err(|e| e.to_string())?,
                )
            };
            if is_inline_image(&text) {
                continue;
            }
            let found = self.scanner.scan(&text);
            if found.is_empty() {
                continue;
            }
            let new = vault.redact(&text, &found);
            let o = out.get_or_insert_with(|| Vec::with_capacity(body.len()));
            o.extend_from_slice(&body[copied..s.start]);
            o.extend_from_slice(
                serde_json::to_string(&new)
                    .map_err(|e| e.to_string())?
                    .as_bytes(),
            );
            copied = s.end;
        }
        if let Some(o) = out.as_mut() {
            o.extend_from_slice(&body[copied..]);
        }
        Ok((out, vault))
    }
}

/// A data URL of an image (a pasted screenshot): base64 bytes, not text, never scanned.
fn is_inline_image(s: &str) -> bool {
    s.starts_with("data:")
        && s.get(..64)
            .unwrap_or(s)
            .find(";base64,")
            .is_some_and(|_| s.get(5..11) == Some("image/"))
}

/// The byte ranges (quotes included) of the string values of `json` (valid JSON): every
/// string literal that is not an object key.
fn strings(json: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&b) = json.get(i) {
        if b != b'"' {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while let Some(k) = json.get(i..).and_then(|r| memchr::memchr2(b'"', b'\\', r)) {
            if json.get(i + k) == Some(&b'\\') {
                i += k + 2;
            } else {
                i += k + 1;
                break;
            }
        }
        let end = i.min(json.len());
        let next = json[end..].iter().find(|c| !c.is_ascii_whitespace());
        if next != Some(&b':') {
            out.push(start..end);
        }
    }
    out
}

/// What the filter did to a request.
#[derive(Debug, Default)]
pub struct Filtered {
    /// The request to send instead (values replaced).
    pub body: Option<Bytes>,
    /// What puts this request's personal data back into its answer.
    pub restorer: Option<Restorer>,
}

impl Proxy {
    /// Filters `raw` (see the module documentation). Refuses the request when it carries a
    /// secret and secrets are refused; records a receipt when anything was found.
    pub async fn filter_private(&self, who: &Who, raw: &Bytes) -> Result<Filtered, ApiError> {
        let Some(filter) = self.privacy.clone() else {
            return Ok(Filtered::default());
        };
        let body = raw.clone();
        let run = move || filter.filter_json(&body).map(|r| (r, filter));
        let ((new, vault), filter) = if raw.len() <= INLINE_BYTES {
            run()
        } else {
            tokio::task::spawn_blocking(run)
                .await
                .map_err(ApiError::internal)?
        }
        .map_err(|e| ApiError::bad_request("MALFORMED_JSON", format!("malformed JSON: {e}")))?;
        if vault.is_empty() {
            return Ok(Filtered::default());
        }
        let refuse = filter.secrets == SecretAction::Refuse
            && vault.replaced().iter().any(|r| r.kind == Kind::Secret);
        let origin = Origin {
            agent: who.agent.clone(),
            session: who.session.clone(),
        };
        self.broker
            .record_privacy(origin, "proxy", vault.replaced(), refuse)
            .await
            .map_err(ApiError::internal)?;
        if refuse {
            let mut rules: Vec<&str> = vault
                .replaced()
                .iter()
                .filter(|r| r.kind == Kind::Secret)
                .map(|r| &*r.rule)
                .collect();
            rules.dedup();
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "SECRET_IN_REQUEST",
                format!(
                    "airlock refused this request: it carries what looks like a secret ({}); it was not sent to the model. Remove it, or reference it without its value.",
                    rules.join(", ")
                ),
            ));
        }
        Ok(Filtered {
            body: new.map(Bytes::from),
            restorer: vault.restorer(),
        })
    }
}

/// A value as it goes inside a JSON string.
fn json_escaped(v: &str) -> String {
    let s = serde_json::to_string(v).unwrap_or_default();
    s.get(1..s.len().saturating_sub(1))
        .unwrap_or_default()
        .to_string()
}

/// Tool-call arguments (JSON text) with the personal data restored inside their strings.
pub fn restore_arguments(r: Option<&Restorer>, args: &mut String) {
    if let Some(r) = r
        && let std::borrow::Cow::Owned(s) = r.restore_with(args, json_escaped)
    {
        *args = s;
    }
}

/// A whole answer with its personal data restored: the strings of its tree (tool-call
/// `arguments` are JSON text, so their values are escaped once more). The upstream's bytes when
/// no placeholder is in them.
pub fn restore_whole(r: Option<&Restorer>, body: Bytes) -> Bytes {
    let Some(r) = r else { return body };
    if memchr::memmem::find(&body, b"[PII:").is_none() {
        return body;
    }
    let Ok(mut doc) = serde_json::from_slice::<Value>(&body) else {
        return body;
    };
    restore_value(r, &mut doc, false);
    serde_json::to_vec(&doc).map(Bytes::from).unwrap_or(body)
}

fn restore_value(r: &Restorer, v: &mut Value, json_text: bool) {
    match v {
        Value::String(s) => {
            let new = if json_text {
                r.restore_with(s, json_escaped)
            } else {
                r.restore(s)
            };
            if let std::borrow::Cow::Owned(n) = new {
                *s = n;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| restore_value(r, x, false)),
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                restore_value(r, x, k == "arguments");
            }
        }
        _ => {}
    }
}

/// The restoration of a streamed answer's text, per choice.
#[derive(Debug)]
pub struct StreamRestore {
    restorer: Restorer,
    choices: BTreeMap<u64, StreamRestorer>,
}

impl StreamRestore {
    pub fn new(restorer: Restorer) -> StreamRestore {
        StreamRestore {
            restorer,
            choices: BTreeMap::new(),
        }
    }

    /// Restores the `delta.content` of each choice of `chunk`; a placeholder cut at the end of
    /// a piece is held back until the next piece, or sent with the choice's finish. Whether
    /// the chunk changed.
    pub fn chunk(&mut self, chunk: &mut Map<String, Value>) -> bool {
        let mut changed = false;
        let Some(Value::Array(choices)) = chunk.get_mut("choices") else {
            return false;
        };
        for (pos, choice) in choices.iter_mut().enumerate() {
            let idx = choice
                .get("index")
                .and_then(Value::as_u64)
                .unwrap_or(pos as u64);
            let finished = choice.get("finish_reason").is_some_and(|f| !f.is_null());
            let st = self
                .choices
                .entry(idx)
                .or_insert_with(|| self.restorer.stream());
            let Some(delta) = choice.get_mut("delta").and_then(Value::as_object_mut) else {
                continue;
            };
            let piece = delta.get("content").and_then(Value::as_str);
            if piece.is_none() && !(finished && st.holding()) {
                continue;
            }
            let mut out = st.push(piece.unwrap_or_default());
            if finished {
                out.push_str(&st.finish());
            }
            if piece != Some(out.as_str()) {
                delta.insert("content".into(), Value::String(out));
                changed = true;
            }
        }
        changed
    }

    /// The text still held for each choice when the stream ends without a finish.
    pub fn rest(&mut self) -> Vec<(u64, String)> {
        self.choices
            .iter_mut()
            .map(|(i, st)| (*i, st.finish()))
            .filter(|(_, s)| !s.is_empty())
            .collect()
    }

    pub fn restorer(&self) -> &Restorer {
        &self.restorer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(c: PrivacyConfig) -> Filter {
        Filter::new(&c).unwrap().unwrap()
    }

    #[test]
    fn only_string_values_change_and_the_rest_keeps_its_bytes() {
        let f = filter(PrivacyConfig {
            personal: PersonalAction::Placeholder,
            ..PrivacyConfig::default()
        });
        let body = br#"{"model": "m",  "messages": [{"role":"user","content":"key AKIAQYLPMN5HHHFPZAM2\nmail jane.doe@acme-corp.com"}], "AKIAQYLPMN5HHHFPZAM2": 1}"#;
        let (new, vault) = f.filter_json(body).unwrap();
        let new = String::from_utf8(new.unwrap()).unwrap();
        assert_eq!(
            new,
            r#"{"model": "m",  "messages": [{"role":"user","content":"key [SECRET:aws_access_key#1]\nmail [PII:email#1]"}], "AKIAQYLPMN5HHHFPZAM2": 1}"#
        );
        assert_eq!(vault.replaced().len(), 2);
        let clean = br#"{"messages":[{"role":"user","content":"hello \"there\""}]}"#;
        assert!(f.filter_json(clean).unwrap().0.is_none());
    }

    #[test]
    fn escaped_strings_are_read_decoded() {
        let f = filter(PrivacyConfig::default());
        let body = br#"{"c":"x\nAKIAQYLPMN5HHHFPZAM2\u0020y"}"#;
        let new = String::from_utf8(f.filter_json(body).unwrap().0.unwrap()).unwrap();
        assert_eq!(new, r#"{"c":"x\n[SECRET:aws_access_key#1] y"}"#);
    }

    #[test]
    fn a_streamed_placeholder_cut_in_two_is_restored() {
        let f = filter(PrivacyConfig {
            personal: PersonalAction::Placeholder,
            ..PrivacyConfig::default()
        });
        let (_, vault) = f.filter_json(br#"{"c":"jane.doe@acme-corp.com"}"#).unwrap();
        let mut s = StreamRestore::new(vault.restorer().unwrap());
        let mut a: Map<String, Value> = serde_json::from_str(
            r#"{"choices":[{"index":0,"delta":{"content":"to [PII:em"},"finish_reason":null}]}"#,
        )
        .unwrap();
        assert!(s.chunk(&mut a));
        assert_eq!(a["choices"][0]["delta"]["content"], "to ");
        let mut b: Map<String, Value> = serde_json::from_str(
            r#"{"choices":[{"index":0,"delta":{"content":"ail#1]!"},"finish_reason":"stop"}]}"#,
        )
        .unwrap();
        assert!(s.chunk(&mut b));
        assert_eq!(
            b["choices"][0]["delta"]["content"],
            "jane.doe@acme-corp.com!"
        );
    }
}
