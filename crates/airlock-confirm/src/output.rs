//! Output contracts (seed 004 T3): a tool's output as a surface saw it, checked against the
//! output schema the policy in force declares for the tool (`Policy::check_output`) and recorded
//! as one receipt that carries the output's SHA-256 (`output_sha256`), whether or not a schema
//! is declared. The surfaces (MCP gateway, proxy, `POST /v1/outputs`) act on the returned
//! drift: a deny withholds the output, an allow passes it flagged.

use std::path::Path;
use std::sync::Arc;

use airlock_core::Finding;
use airlock_ledger::canonical::{sha256_hex, to_canonical};
use airlock_policy::Policy;
use serde_json::Value;

use crate::ConfirmError;
use crate::broker::Broker;
use crate::event::{Event, Origin};

/// What the broker found in, and recorded for, one tool output.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputChecked {
    /// SHA-256 of the output's RFC 8785 canonical form (of the text, for a text output).
    pub output_sha256: String,
    /// Whether the policy declares an output schema for the tool.
    pub declared: bool,
    /// The drift finding: `deny` withholds the output, `allow` passes it flagged.
    pub drift: Option<Finding>,
    /// The receipt that records it.
    pub receipt: String,
}

/// The SHA-256 a receipt records for an output: of its canonical JSON, or of the text itself
/// when the output is a string (a chat tool message), so anyone holding the output can check it.
pub fn output_sha256(output: &Value) -> Result<String, ConfirmError> {
    Ok(match output {
        Value::String(s) => sha256_hex(s.as_bytes()),
        v => sha256_hex(&to_canonical(v)?),
    })
}

impl Broker {
    /// The policy in force for `cwd`, as the broker decides with it; a policy that cannot be
    /// loaded is an error (the caller denies or withholds).
    pub fn policy_for(&self, cwd: Option<&Path>) -> Result<Arc<Policy>, ConfirmError> {
        (self.inner.policy)(cwd).map_err(|e| ConfirmError::Internal(format!("the policy: {e}")))
    }

    /// Checks `output` of `tool` against the policy in force for `cwd` and records it; see the
    /// module documentation. A policy that cannot be loaded is an error: the caller withholds.
    pub async fn check_output(
        &self,
        origin: Origin,
        tool: &str,
        cwd: Option<&Path>,
        output: &Value,
    ) -> Result<OutputChecked, ConfirmError> {
        let policy = self.policy_for(cwd)?;
        let declared = policy.declares_output(tool);
        let drift = policy.check_output(tool, output);
        let output_sha256 = output_sha256(output)?;
        let event = Event::ToolOutput {
            origin,
            tool: tool.to_string(),
            output_sha256: output_sha256.clone(),
            declared,
            drift: drift.clone(),
        };
        let receipt = self.record_event(&event).await?;
        Ok(OutputChecked {
            output_sha256,
            declared,
            drift,
            receipt,
        })
    }
}
