//! The policy file format: what one TOML file (one layer) may say. Parsing is strict: an
//! unknown key is an error, so a typo never silently weakens a policy. `docs/policy.md`
//! documents every field with a complete example.

use std::collections::BTreeMap;

use airlock_core::Decision;
use serde::{Deserialize, Serialize};

/// One policy file as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    #[serde(default)]
    pub policy: Settings,
    /// Per-tier confirmation requirements, keyed `"0"` to `"4"`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tiers: BTreeMap<String, TierSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<RiskSpec>,
    /// Side-effect profile per agent name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub agents: BTreeMap<String, AgentSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crisis: Option<CrisisSpec>,
    /// What makes a context production (besides `[policy] production = true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub production: Option<ProductionSpec>,
    /// Behaviours that weigh in the risk score, by name (`credential_read`, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub behaviour: BTreeMap<String, BehaviourSpec>,
    /// Hosts the project's code and past approved actions use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<HostsSpec>,
    /// What the hooks do with a flagged prompt or tool output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<TextSpec>,
    /// Examples run by `airlock policy test`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<ExampleSpec>,
}

/// Settings of a layer. Every field is optional: an absent field leaves the lower layer's value.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Format version; only 1 exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Default side-effect profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Profile>,
    /// The machine or project is production: adds the risk weight `risk.production`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub production: Option<bool>,
    /// Managed layer only: the loosest profile any agent or session may have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_profile: Option<Profile>,
    /// Managed layer only: whether allow rules of the user layer may loosen built-in decisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_may_allow: Option<bool>,
    /// Managed layer only: whether grants may have broad scopes (`bash -c *`, `*`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_broad_grants: Option<bool>,
    /// User layer only: directories (path globs) where the person lowers friction: allowed
    /// actions there need no LLM review and unknown hosts are not asked about. Never in
    /// production, and never over a rule or finding that asks or denies.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trusted_dirs: Vec<String>,
}

/// What makes a context production. Patterns are globs (`*` any run, `?` one character),
/// matched without regard to ASCII case.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProductionSpec {
    /// Environment names (`AIRLOCK_ENV`, or `--env`/`--stage`/`--environment` on a command).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub environments: Vec<String>,
    /// Kubernetes contexts (the current one, or `--context` on a command).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kube_contexts: Vec<String>,
    /// Git branches checked out in the working directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub git_branches: Vec<String>,
    /// Cloud profiles, projects and subscriptions (`AWS_PROFILE`, `--profile`, `--project`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cloud_profiles: Vec<String>,
    /// The least tier a state-changing action in production asks at (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_tier: Option<u8>,
}

/// One behaviour the risk score weighs: the findings (rule-id globs) that show it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BehaviourSpec {
    /// Points added once when any of `rules` is among the findings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<u32>,
    /// Rule ids (globs: `secrets.read_*`) whose findings show the behaviour.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<String>,
    /// Regexes over the text of a message the agent sends (for behaviours of its output).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub text: Vec<String>,
    /// What the finding says, for the agent and the person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Hosts the project knows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostsSpec {
    /// Domains (`example.com`, `*.example.com`) the project's code and approved actions use.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub known: Vec<String>,
    /// Whether an upload or write to a host not known asks (default true once `known` is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask_unknown: Option<bool>,
    /// The hosts the agent's web-fetch tools may read (domain patterns). Once any layer lists
    /// them, a fetch of another host asks: a project declares where its agents read from.
    /// It only narrows: loopback, private and metadata addresses ask whatever it says.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fetch: Vec<String>,
}

/// What an agent may change at all, whatever the rules say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// Reads only: commands on the read-only list, read-side tools, GET fetches.
    ReadOnly,
    /// Writes inside the workspace; writes elsewhere and outward effects need a person.
    WorkspaceWrite,
    /// No limit beyond the rules.
    Full,
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::ReadOnly => "read-only",
            Profile::WorkspaceWrite => "workspace-write",
            Profile::Full => "full",
        }
    }

    pub fn parse(s: &str) -> Option<Profile> {
        match s {
            "read-only" => Some(Profile::ReadOnly),
            "workspace-write" => Some(Profile::WorkspaceWrite),
            "full" => Some(Profile::Full),
            _ => None,
        }
    }
}

/// Who confirms an action asked at a tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Confirmers {
    #[serde(rename = "none")]
    Nobody,
    #[serde(rename = "llm")]
    Llm,
    #[serde(rename = "human")]
    Human,
    #[serde(rename = "llm+human")]
    LlmAndHuman,
}

impl Confirmers {
    pub fn as_str(self) -> &'static str {
        match self {
            Confirmers::Nobody => "none",
            Confirmers::Llm => "llm",
            Confirmers::Human => "human",
            Confirmers::LlmAndHuman => "llm+human",
        }
    }

    pub fn person(self) -> bool {
        matches!(self, Confirmers::Human | Confirmers::LlmAndHuman)
    }

    pub fn llm(self) -> bool {
        matches!(self, Confirmers::Llm | Confirmers::LlmAndHuman)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm: Option<Confirmers>,
    /// How long to wait for an answer before denying (`"60s"`, `"2m"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// The person types a short code derived from the action's hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deliberate: Option<bool>,
    /// An approval takes effect only after this long, and can be cancelled until then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_lock: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RiskSpec {
    /// Points per finding by severity (`info`, `low`, `medium`, `high`, `critical`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub weights: BTreeMap<String, u32>,
    /// Points added when the context is production.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub production: Option<u32>,
    /// Points per denial in the same session within the recent window the caller counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_recent_denial: Option<u32>,
    /// A score at or above a channel's threshold needs a person (`terminal`, `chat`, `api`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub thresholds: BTreeMap<String, u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Profile>,
    /// The agent's tool bundle: tool-name globs, plus `shell`, `write`, `fetch` and `message`
    /// for commands, file writes, requests and messages. Anything else is denied for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
}

/// One rule. Exactly one matcher: `when` (Claude Code permission syntax) or one of `shell`,
/// `tool`, `write`, `network`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    pub decision: Decision,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<u8>,
    /// Shown to the agent when the rule asks or denies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// What a tool's effects reach, for side-effect profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SideEffects {
    /// Reads only.
    Read,
    /// Changes files or state inside the workspace.
    Write,
    /// Reaches outside: other systems, people, money.
    External,
}

/// A declared tool. Tools nobody declares are denied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    /// Exact name, or a glob (`mcp__github__*`).
    pub name: String,
    /// Decision for a call that passes its schema (default allow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_effects: Option<SideEffects>,
    /// The JSON Schema of the arguments, inline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<serde_json::Value>,
    /// The JSON Schema of the arguments, in a file (relative to the policy file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_file: Option<String>,
    /// SHA-256 (hex) of the schema's RFC 8785 canonical form; a different schema denies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_sha256: Option<String>,
    /// Deny every call when no usable schema is configured.
    #[serde(default)]
    pub require_schema: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema_sha256: Option<String>,
    /// What an output that drifts from `output_schema` gets: withheld (`deny`, the default) or
    /// passed with a warning the model reads (`flag`). Recorded either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_drift: Option<OutputDrift>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// What a tool output that drifts from its declared output schema gets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputDrift {
    /// Withheld: the model reads why instead (seed 004 T3: a changed server is a hard stop).
    #[default]
    Deny,
    /// Passed on with a warning the model reads first.
    Flag,
}

/// What happens to a person's prompt the text scanner reads as a jailbreak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PromptHandling {
    /// The prompt goes through with a warning added to the model's context.
    Annotate,
    /// The prompt is refused with a reason the person reads.
    Block,
}

/// What happens to a tool's output in which the text scanner finds instructions for the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputHandling {
    /// The model is told, with the spans, that the output carries instructions it must not
    /// follow.
    Annotate,
    /// As `annotate`, and the output is kept from the model where the agent allows it.
    Withhold,
}

/// `[text]`: the hooks' handling of flagged texts (a crisis is never blocked: its guidance is
/// added to the model's context).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextSpec {
    /// A jailbreak in the person's prompt (built-in: `block`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jailbreak: Option<PromptHandling>,
    /// Instructions in a tool's output (built-in: `annotate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub injection: Option<OutputHandling>,
    /// The most bytes of one text scanned (built-in: 262144); a longer text is scanned in its
    /// first three quarters and last quarter of this, and the model is told so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scan_limit: Option<u64>,
}

/// Crisis mode: which tools support a person and which decide for them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrisisSpec {
    /// Showing crisis resources and the like: never gated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub support_tools: Vec<String>,
    /// Contacting someone, sharing a location, ending the conversation: always a person.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decision_tools: Vec<String>,
}

/// An example action and the decision the effective policy must reach for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExampleSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crisis: Option<bool>,
    /// The context is production (as `AIRLOCK_PRODUCTION=1` says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub production: Option<bool>,
    /// Production facts of the example's context (examples never read the real ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_context: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud_profile: Option<String>,
    /// The working directory (for trusted directories).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    pub expect: Decision,
    /// The id of the rule that must decide (`LAYER:ID` or a check id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}
