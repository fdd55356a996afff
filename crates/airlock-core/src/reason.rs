//! Stable reason codes. They are part of the wire format (hook answers, API bodies, receipts):
//! never rename one; add new ones at the end of their group. `docs/reason-codes.md` documents
//! each, and a test checks that the document and this list agree.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! reason_codes {
    ($( $(#[$doc:meta])* $variant:ident = $code:literal : $summary:literal ,)*) => {
        /// Why a finding was raised, as a stable `SCREAMING_SNAKE_CASE` code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum ReasonCode {
            $( $(#[$doc])* #[serde(rename = $code)] $variant, )*
        }

        impl ReasonCode {
            /// Every code, in documentation order.
            pub const ALL: &'static [ReasonCode] = &[$(ReasonCode::$variant,)*];

            /// The stable wire name.
            pub fn as_str(self) -> &'static str {
                match self { $(ReasonCode::$variant => $code,)* }
            }

            /// One line saying what the code means.
            pub fn summary(self) -> &'static str {
                match self { $(ReasonCode::$variant => $summary,)* }
            }

            /// Looks a code up by its wire name.
            pub fn parse(s: &str) -> Option<Self> {
                match s { $($code => Some(ReasonCode::$variant),)* _ => None }
            }
        }
    };
}

reason_codes! {
    // -- analysis of an action ------------------------------------------------------------------
    /// A rule from a rule pack matched.
    RuleMatch = "RULE_MATCH": "a rule from a rule pack matched the action",
    /// The command is on the known read-only list.
    ReadOnly = "READ_ONLY": "every command is on the known read-only list",
    /// A command that is neither read-only nor matched by a rule.
    UnknownCommand = "UNKNOWN_COMMAND": "a command that is not known to be read-only and matched no rule",
    /// The shell parser rejected the input (or panicked).
    ParseError = "PARSE_ERROR": "the command line could not be parsed, so it cannot be analysed",
    /// Code assembled at run time (`eval "$x"`, `bash -c "$y"`, `$cmd args`).
    DynamicCode = "DYNAMIC_CODE": "the command runs code that is only known at run time",
    /// A decoded or generated payload is fed to an interpreter.
    DecodedPayload = "DECODED_PAYLOAD": "an encoded or generated payload is piped into a shell or interpreter",
    /// The input is over the size limit.
    InputTooLarge = "INPUT_TOO_LARGE": "the input is larger than the analysis limit",
    /// Wrappers or substitutions nest deeper than the analyser follows.
    NestingTooDeep = "NESTING_TOO_DEEP": "wrappers or substitutions nest deeper than the analysis limit",
    /// ANSI escapes or control characters that can hide text on a terminal.
    TerminalDeception = "TERMINAL_DECEPTION": "escape sequences or control characters that can hide what runs",
    /// A NUL byte in the input.
    NulByte = "NUL_BYTE": "the input contains a NUL byte",
    /// Confusable or invisible Unicode characters in a command word.
    ConfusableCommand = "CONFUSABLE_COMMAND": "a command word contains look-alike or invisible Unicode characters",
    /// An expansion that may resolve to `/`, `~` or another root.
    UnsafeExpansion = "UNSAFE_EXPANSION": "a parameter expansion may resolve to / or ~ in a destructive command",
    /// Inline interpreter code (`python -c`, `perl -e`, …) with a dangerous capability.
    InlineCode = "INLINE_CODE": "inline interpreter code spawns processes, deletes files, uses the network or reads secrets",
    /// A write or edit to a sensitive path.
    SensitivePath = "SENSITIVE_PATH": "a write to a sensitive path (credentials, system configuration, agent configuration)",
    /// The analysis did not finish within its time limit (the hook's deadline).
    AnalysisTimeout = "ANALYSIS_TIMEOUT": "the analysis did not finish within its time limit",
    /// A package install names a package that is not popular but is one slip away from a popular one.
    PackageTyposquat = "PACKAGE_TYPOSQUAT": "a package to install is named like a popular package with a typing slip (a possible typosquat)",
    /// A fetch goes to this machine, a link-local or metadata address, a private network, or an
    /// IP address in an unusual spelling.
    NetworkInternal = "NETWORK_INTERNAL": "a fetch goes to loopback, link-local or cloud metadata, a private network, or an oddly spelt IP address",
    /// A URL to fetch carries what looks like a secret (a key or token in its query, a password).
    SecretInUrl = "SECRET_IN_URL": "a URL to fetch carries what looks like a secret (a key, token or password)",
    // -- input and protocol ---------------------------------------------------------------------
    /// Input that is not valid UTF-8.
    NotUtf8 = "NOT_UTF8": "the input is not valid UTF-8",
    /// Input that does not follow the expected wire format.
    MalformedInput = "MALFORMED_INPUT": "the input does not follow the expected format",
    /// A tool the analyser has no rules for.
    UnsupportedTool = "UNSUPPORTED_TOOL": "the tool is not one the analyser knows; a person should look",
    /// airlock failed internally; failing closed.
    InternalError = "INTERNAL_ERROR": "airlock failed internally and denies to stay safe",
    // -- text flowing into the model (airlock-shield) ------------------------------------------
    /// A user message tries to jailbreak the model.
    TextJailbreak = "TEXT_JAILBREAK": "a message tries to talk the model out of its instructions or safety rules",
    /// Text returned by a tool or read from a document carries instructions for the model.
    TextInjection = "TEXT_INJECTION": "text from a tool or document carries instructions addressed to the model",
    /// Someone may be in danger.
    TextCrisis = "TEXT_CRISIS": "the person may be in crisis: answer with the configured crisis response",
    /// Invisible characters or hidden markup in text the model will read.
    HiddenText = "HIDDEN_TEXT": "the text hides content from people (invisible characters, tag characters, hidden markup)",
    // -- text leaving for a remote model (airlock-privacy) -------------------------------------
    /// A request to a remote model carried a secret (replaced by a placeholder, or refused).
    PrivacySecret = "PRIVACY_SECRET": "text bound for a remote model carries a secret (a key, token, private key or password)",
    /// A request to a remote model carried personal data (replaced for the request, restored in the answer).
    PrivacyPersonal = "PRIVACY_PERSONAL": "text bound for a remote model carries personal data (an e-mail address, phone, card or account number, national id, IP address)",
    /// A tool call's arguments carry an inline secret to a network destination.
    SecretToNetwork = "SECRET_TO_NETWORK": "a tool call sends what looks like an inline secret (a key, token or private key) to a network destination",
    /// The text is longer than the scan limit: its start and end were scanned, the middle not.
    TextPartlyScanned = "TEXT_PARTLY_SCANNED": "the text is longer than the scan limit, so only its start and end were scanned",
    /// A session was marked in crisis (a crisis verdict on the person's text).
    SessionCrisis = "SESSION_CRISIS": "the session is in crisis mode since a crisis verdict on the person's text",
    /// An approver ended a session's crisis mode.
    CrisisCleared = "CRISIS_CLEARED": "an approver ended the session's crisis mode",

    // -- policy ----------------------------------------------------------------------------------
    /// A rule of a policy file decided.
    PolicyRule = "POLICY_RULE": "a rule of a policy file (built-in, user, project or managed layer) decided",
    /// A tool no policy layer declares (default deny for tools).
    ToolUndeclared = "TOOL_UNDECLARED": "the tool is not declared by any policy layer, so it is denied",
    /// Tool arguments that fail the pinned JSON Schema (unknown fields included).
    SchemaViolation = "SCHEMA_VIOLATION": "the tool's arguments do not match its pinned JSON Schema",
    /// A tool that requires a schema has none that airlock can use.
    SchemaMissing = "SCHEMA_MISSING": "the tool requires an argument schema, and none is configured or it cannot be compiled",
    /// The schema's content hash differs from the hash pinned in the policy.
    SchemaPinMismatch = "SCHEMA_PIN_MISMATCH": "the tool's schema does not have the SHA-256 pinned in the policy",
    /// A tool's output no longer matches its declared output schema.
    OutputSchemaDrift = "OUTPUT_SCHEMA_DRIFT": "the tool's output does not match its declared output schema",
    /// The action goes beyond the side-effect profile of the agent or session.
    ProfileViolation = "PROFILE_VIOLATION": "the action goes beyond the agent's or session's side-effect profile",
    /// The risk score reached the channel's threshold.
    RiskThreshold = "RISK_THRESHOLD": "the action's risk score reached the channel's threshold for asking a person",
    /// The model's reply to a person in crisis gave method details; the person got the crisis
    /// response instead.
    CrisisReplyMethod = "CRISIS_REPLY_METHOD": "the model's reply to a person in crisis gave method details (doses, heights, means, steps); it was replaced by the crisis response",
    /// A support action in crisis mode: never gated.
    CrisisSupport = "CRISIS_SUPPORT": "a crisis support action (showing crisis resources), which is never gated",
    /// A decision action in crisis mode: always needs a person.
    CrisisDecision = "CRISIS_DECISION": "a decision taken for a person in crisis (contacting someone, sharing a location, ending the conversation) needs a person",
    /// The policy files could not be loaded.
    PolicyError = "POLICY_ERROR": "the policy files could not be loaded or are invalid, so airlock denies",
    /// A state-changing action in a context declared production.
    ProductionChange = "PRODUCTION_CHANGE": "the action changes something in a context declared production (policy, environment, kube context, branch or cloud profile), so a person confirms",
    /// A behaviour the risk score weighs (credential reads, self-modification, another agent's files, asking for secrets).
    RiskBehaviour = "RISK_BEHAVIOUR": "the action shows a behaviour the risk score weighs (reading credentials, changing the agent's own configuration, entering another agent's files, asking the person for secrets)",
    /// An upload or write to a host the project does not know.
    UnknownHost = "UNKNOWN_HOST": "an upload or write goes to a host the project's known hosts do not name, or a fetch to a host its `[hosts] fetch` list does not name",
    // -- capabilities (airlock-grants) --------------------------------------------------------
    /// An active grant covered the action and one of its uses was counted.
    GrantUsed = "GRANT_USED": "an active grant covered the action and one of its uses was counted",
    /// A grant's scope is wider than airlock grants without the admin layer's permission.
    GrantScopeTooBroad = "GRANT_SCOPE_TOO_BROAD": "the grant's scope is too broad (a shell, interpreter, wrapper, inline code or wildcard)",
    /// A forwarded grant would be wider than the grant it derives from.
    DelegationScopeViolation = "DELEGATION_SCOPE_VIOLATION": "a forwarded grant would cover more, last longer or allow more uses than its parent",
    /// The grant exists but cannot be used or forwarded now.
    GrantNotUsable = "GRANT_NOT_USABLE": "the grant is proposed, revoked, expired or used up (or one of its ancestors is)",
    /// No grant has this id.
    GrantNotFound = "GRANT_NOT_FOUND": "no grant has this id",
    /// A grant request or a stored grant is malformed.
    GrantInvalid = "GRANT_INVALID": "the grant request or stored grant is malformed",
    /// A grant's life-cycle event, recorded in the ledger (not a decision on an action).
    GrantEvent = "GRANT_EVENT": "a grant was created, confirmed, revoked or ended with its session (a ledger record)",
    // -- containment (airlock-sandbox, `airlock run`) ------------------------------------------
    /// The egress proxy let a confined command connect: a grant covered the host and port.
    EgressAllowed = "EGRESS_ALLOWED": "a sandboxed command's connection was let through the egress proxy by a network grant",
    /// The egress proxy refused a connection: no grant, a revoked one, or a special address.
    EgressDenied = "EGRESS_DENIED": "the egress proxy refused a sandboxed command's connection (no usable grant covers the host and port, or it resolves to a loopback, link-local or private address)",
    /// The kernel cannot confine the command, so it is not run.
    SandboxUnavailable = "SANDBOX_UNAVAILABLE": "the kernel lacks what the sandbox needs (Landlock, or its network rules for a run with network), so the command is refused rather than run unconfined",
    /// A tool call asks to run outside the sandbox.
    SandboxEscape = "SANDBOX_ESCAPE": "the tool call asks to run outside the sandbox (for example dangerouslyDisableSandbox), so a person decides",
    // -- WASM tools (airlock-wasm, `airlock tool`) ----------------------------------------------
    /// The file is not a WebAssembly module airlock runs.
    WasmInvalidModule = "WASM_INVALID_MODULE": "the WASM tool is not a valid module airlock runs (malformed, fails validation, too large, has a start section, or lacks the export to call)",
    /// The module imports something airlock does not provide.
    WasmUnknownImport = "WASM_UNKNOWN_IMPORT": "the WASM tool imports a host function, memory, table or global airlock does not provide (only WASI preview 1 functions are)",
    /// The module used all its fuel.
    WasmOutOfFuel = "WASM_OUT_OF_FUEL": "the WASM tool used all its fuel (its instruction budget) and was stopped",
    /// The module grew its memory or a table past the cap.
    WasmMemoryLimit = "WASM_MEMORY_LIMIT": "the WASM tool tried to grow its memory or a table past the cap and was stopped",
    /// The module ran past its wall-clock limit.
    WasmTimeout = "WASM_TIMEOUT": "the WASM tool ran past its wall-clock limit and was stopped",
    /// The module wrote more than the output cap.
    WasmOutputLimit = "WASM_OUTPUT_LIMIT": "the WASM tool wrote more than its cap to standard output and error and was stopped",
    /// The module trapped (unreachable, out-of-bounds access, division by zero, stack overflow).
    WasmTrap = "WASM_TRAP": "the WASM tool trapped (unreachable, an out-of-bounds access, division by zero, a stack overflow)",
    /// A capability was refused: a path outside the granted directories, a write without a
    /// write grant, a device, or a protected directory asked for by the run.
    WasmCapabilityDenied = "WASM_CAPABILITY_DENIED": "the WASM tool (or its run) asked for a capability it was not given: a path outside its directories, a write without a write grant, a device or pipe, or a protected directory",
    // -- approvals (airlock-confirm, airlock-gateway) ------------------------------------------
    /// A person (or the LLM reviewer where the tier lets it decide alone) approved the action.
    Approved = "APPROVED": "the action was approved by the confirmers its tier requires",
    /// A person or the LLM reviewer denied the action.
    ApprovalDenied = "APPROVAL_DENIED": "a person or the LLM reviewer denied the action",
    /// Nobody answered before the tier's timeout: silence is not consent.
    ApprovalTimeout = "APPROVAL_TIMEOUT": "nobody answered before the tier's timeout, so the action is denied",
    /// A time-locked approval was cancelled before it took effect.
    ApprovalCancelled = "APPROVAL_CANCELLED": "a time-locked approval was cancelled before it took effect",
    /// The action waits for an answer.
    ApprovalPending = "APPROVAL_PENDING": "the action waits for a person or the LLM reviewer",
    /// An ask in a run that has nobody to answer it (`AIRLOCK_ASK=deny`, no daemon answered).
    NobodyToAsk = "NOBODY_TO_ASK": "the action needs a person and this run has nobody to ask (AIRLOCK_ASK=deny), so it is denied",
    /// The session's agent was denied several times in a row and is told to stop.
    DenialStreak = "DENIAL_STREAK": "several actions in a row were denied in this session: stop trying variations",
    /// The LLM reviewer could not give a usable answer; a person decides instead.
    LlmUnavailable = "LLM_UNAVAILABLE": "the LLM reviewer timed out, failed or answered malformed output, so a person decides",
    /// An answer was refused: wrong role, the agent's own action, a second answer, a wrong code
    /// or an answer bound to another action.
    AnswerRefused = "ANSWER_REFUSED": "the answer was refused (wrong role, own action, already decided, wrong code, or another action's hash)",
    /// Too many wrong tier-4 confirmation codes were typed: the approval is locked out and the
    /// action denied; no code opens it afterwards.
    CodeLockout = "CODE_LOCKOUT": "too many wrong tier-4 confirmation codes were typed, so the approval is locked out and the action denied",
    // -- interception surfaces (proxy, MCP gateway) ---------------------------------------------
    /// The agent token's budget for the period is spent; the request never reached the model.
    BudgetExceeded = "BUDGET_EXCEEDED": "the agent token's request, token or cost budget for the period is spent",
}

impl fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for c in ReasonCode::ALL {
            assert_eq!(ReasonCode::parse(c.as_str()), Some(*c));
            let json = serde_json::to_string(c).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
        }
    }

    #[test]
    fn codes_are_documented() {
        let doc = include_str!("../../../docs/reason-codes.md");
        for c in ReasonCode::ALL {
            assert!(
                doc.contains(&format!("`{}`", c.as_str())),
                "{} missing from docs/reason-codes.md",
                c.as_str()
            );
        }
    }
}
