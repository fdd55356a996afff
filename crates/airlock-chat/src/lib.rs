//! airlock's chat channels for approvals. A channel posts each approval a person is asked
//! about to the chats it is configured for, with buttons whose data is bound to the message by
//! a MAC, and turns a tap or a typed `/approve CODE` of an allow-listed approver into
//! `Broker::answer` (so the broker's once-only, bound-to-the-action and tier-4 code rules hold);
//! when the approval is decided, on any channel or node, its messages show the outcome without
//! live buttons. It knows the platforms' wire formats and nothing of how actions are decided.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod command;
pub mod courier;
mod desk;
pub mod discord;
pub mod emergency;
mod error;
mod http;
mod lease;
pub mod route;
pub mod slack;
pub mod tap;
pub mod telegram;
pub mod text;

pub use desk::{Desk, Offer, Reply};
pub use emergency::{Emergency, EmergencyConfig};
pub use error::ChatError;
pub use route::{OnTimeout, Route, Routes};
pub use telegram::{Telegram, TelegramConfig};
