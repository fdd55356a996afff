//! A text scanner's verdict recorded, one use-case for the surfaces that scan a text and then
//! pass, annotate or block it (`POST /v1/scan` with `record`, the MCP gateway in-process): the
//! verdict is an [`Event::Scan`] receipt (by the text's hash), and a crisis verdict also puts
//! the session in crisis mode ([`crate::crisis::mark`]) before the receipt is written, so a
//! later action of the session is decided in crisis mode whichever surface saw the crisis.

use airlock_shield::{Direction, ScanResult};

use crate::ConfirmError;
use crate::broker::Broker;
use crate::event::{Event, Origin};

/// What [`Broker::record_scan`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanRecorded {
    /// The verdict's receipt.
    pub receipt: String,
    /// The verdict was a crisis: the session is in crisis mode (marked now or before).
    pub session_crisis: bool,
}

impl Broker {
    /// Records `result`, the verdict on `text` from `source` (`mcp:<server>:<method>`, a
    /// client's name), with what the surface does with a flagged text (`handling`). A crisis
    /// verdict marks `origin.session` in crisis mode first (source `scan:<source>`, the
    /// scanner's first crisis rule).
    pub async fn record_scan(
        &self,
        origin: Origin,
        source: &str,
        direction: Direction,
        text: &str,
        result: &ScanResult,
        handling: &str,
    ) -> Result<ScanRecorded, ConfirmError> {
        let session_crisis = result.verdict.is_crisis();
        if session_crisis {
            let rule = result.first_rule("crisis.");
            self.mark_crisis(&origin, &format!("scan:{source}"), &rule)
                .await?;
        }
        let event = Event::scan(origin, source, direction, text, result.verdict, handling);
        let receipt = self.record_event(&event).await?;
        Ok(ScanRecorded {
            receipt,
            session_crisis,
        })
    }
}
