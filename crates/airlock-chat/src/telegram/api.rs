//! A thin Telegram Bot API client: `POST {base}/bot{token}/{method}` with a JSON body, answers
//! `{"ok": true, "result": …}` or `{"ok": false, "error_code": …, "description": …,
//! "parameters": {"retry_after": …}}`. Only the fields airlock reads are typed; the rest is
//! ignored. The token is part of the URL, so it never appears in an error or a log line.

use std::time::Duration;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::ChatError;

const PLATFORM: &str = "Telegram";

/// The largest answer read from the Bot API (100 updates of long messages fit easily).
const MAX_ANSWER: usize = 4 * 1024 * 1024;

#[derive(Debug, Clone, Deserialize)]
pub struct User {
    pub id: i64,
    #[serde(default)]
    pub is_bot: bool,
    #[serde(default)]
    pub username: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Chat {
    pub id: i64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Message {
    pub message_id: i64,
    pub chat: Chat,
    #[serde(default)]
    pub from: Option<User>,
    #[serde(default)]
    pub text: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CallbackQuery {
    pub id: String,
    pub from: User,
    /// Absent when the message is too old for Telegram to send.
    #[serde(default)]
    pub message: Option<Message>,
    #[serde(default)]
    pub data: Option<String>,
}

/// One update; kinds airlock does not read (edited messages, joins, …) have neither field.
#[derive(Debug, Clone, Deserialize)]
pub struct Update {
    pub update_id: i64,
    #[serde(default)]
    pub message: Option<Message>,
    #[serde(default)]
    pub callback_query: Option<CallbackQuery>,
}

#[derive(Debug, Deserialize)]
struct Envelope {
    ok: bool,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error_code: Option<u16>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    parameters: Option<Parameters>,
}

#[derive(Debug, Deserialize)]
struct Parameters {
    #[serde(default)]
    retry_after: Option<u64>,
}

/// A bot's client.
#[derive(Clone)]
pub struct Api {
    client: reqwest::Client,
    /// `{base}/bot{token}`.
    root: String,
}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("telegram::Api { .. }")
    }
}

impl Api {
    /// `poll` is the long-poll timeout; requests may take that long plus a margin.
    pub fn new(base_url: &str, token: &str, poll: Duration) -> Result<Api, ChatError> {
        Ok(Api {
            client: crate::http::client(poll + Duration::from_secs(15))?,
            root: format!("{}/bot{token}", base_url.trim_end_matches('/')),
        })
    }

    async fn call<T: DeserializeOwned>(&self, method: &str, body: Value) -> Result<T, ChatError> {
        let resp = self
            .client
            .post(format!("{}/{method}", self.root))
            .json(&body)
            .send()
            .await
            .map_err(|e| transport(method, e))?;
        let status = resp.status().as_u16();
        let bytes = read_capped(resp)
            .await
            .map_err(|detail| ChatError::Transport {
                platform: PLATFORM,
                detail: format!("{method}: {detail}"),
            })?;
        let env: Envelope = serde_json::from_slice(&bytes).map_err(|e| ChatError::Malformed {
            platform: PLATFORM,
            method: method.into(),
            detail: format!("HTTP {status}: {e}"),
        })?;
        if !env.ok || !(200..300).contains(&status) {
            return Err(ChatError::Platform {
                platform: PLATFORM,
                method: method.into(),
                status: env.error_code.unwrap_or(status),
                description: env.description.unwrap_or_default(),
                retry_after: env.parameters.and_then(|p| p.retry_after),
            });
        }
        serde_json::from_value(env.result.unwrap_or(Value::Null)).map_err(|e| {
            ChatError::Malformed {
                platform: PLATFORM,
                method: method.into(),
                detail: e.to_string(),
            }
        })
    }

    /// Updates from `offset` on, waiting up to `timeout` for one.
    pub async fn get_updates(
        &self,
        offset: Option<i64>,
        timeout: Duration,
    ) -> Result<Vec<Update>, ChatError> {
        let mut body = json!({
            "timeout": timeout.as_secs(),
            "allowed_updates": ["message", "callback_query"],
        });
        if let Some(o) = offset {
            body["offset"] = json!(o);
        }
        self.call("getUpdates", body).await
    }

    /// Sends `text` to `chat` with an inline keyboard (rows of (label, callback data)).
    pub async fn send_message(
        &self,
        chat: &str,
        text: &str,
        keyboard: &[Vec<(String, String)>],
    ) -> Result<Message, ChatError> {
        let mut body = json!({ "chat_id": chat, "text": text });
        if !keyboard.is_empty() {
            body["reply_markup"] = markup(keyboard);
        }
        self.call("sendMessage", body).await
    }

    /// A reply to a typed command.
    pub async fn reply(&self, chat: &str, to: i64, text: &str) -> Result<Message, ChatError> {
        let body = json!({
            "chat_id": chat,
            "text": text,
            "reply_parameters": { "message_id": to, "allow_sending_without_reply": true },
        });
        self.call("sendMessage", body).await
    }

    /// Stops the spinner on the tapper's button with a short notice.
    pub async fn answer_callback(&self, id: &str, text: &str) -> Result<(), ChatError> {
        let text: String = text.chars().take(190).collect();
        let _: bool = self
            .call(
                "answerCallbackQuery",
                json!({ "callback_query_id": id, "text": text, "show_alert": false }),
            )
            .await?;
        Ok(())
    }

    /// Replaces a message's text and removes its buttons (an empty inline keyboard).
    pub async fn edit_final(&self, chat: &str, message: &str, text: &str) -> Result<(), ChatError> {
        let message_id: i64 = message.parse().map_err(|_| ChatError::Malformed {
            platform: PLATFORM,
            method: "editMessageText".into(),
            detail: format!("stored message id {message:?} is not a number"),
        })?;
        let body = json!({
            "chat_id": chat,
            "message_id": message_id,
            "text": text,
            "reply_markup": { "inline_keyboard": [] },
        });
        match self.call::<Value>("editMessageText", body).await {
            Ok(_) => Ok(()),
            // Already showing this text (an earlier edit landed but was not recorded).
            Err(ChatError::Platform {
                status: 400,
                description,
                ..
            }) if description.contains("message is not modified") => Ok(()),
            Err(e) => Err(e),
        }
    }
}

fn markup(keyboard: &[Vec<(String, String)>]) -> Value {
    let rows: Vec<Value> = keyboard
        .iter()
        .map(|row| {
            Value::Array(
                row.iter()
                    .map(|(text, data)| json!({ "text": text, "callback_data": data }))
                    .collect(),
            )
        })
        .collect();
    json!({ "inline_keyboard": rows })
}

fn transport(method: &str, e: reqwest::Error) -> ChatError {
    // reqwest's message includes the URL, and the URL holds the token: never show it.
    let e = e.without_url();
    ChatError::Transport {
        platform: PLATFORM,
        detail: format!("{method}: {e}"),
    }
}

async fn read_capped(mut resp: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| e.without_url().to_string())?
    {
        if out.len() + chunk.len() > MAX_ANSWER {
            return Err(format!("answer larger than {MAX_ANSWER} bytes"));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

impl crate::courier::Post for Api {
    async fn send(
        &self,
        chat: &str,
        text: &str,
        buttons: &crate::courier::Buttons,
    ) -> Result<String, ChatError> {
        Ok(self
            .send_message(chat, text, buttons)
            .await?
            .message_id
            .to_string())
    }

    async fn edit_final(&self, chat: &str, message: &str, text: &str) -> Result<(), ChatError> {
        Api::edit_final(self, chat, message, text).await
    }
}
