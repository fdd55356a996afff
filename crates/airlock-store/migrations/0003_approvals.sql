-- Approvals (airlock-confirm): actions waiting for an LLM reviewer and/or a person. Portable SQL
-- (SQLite and PostgreSQL); times are unix milliseconds; booleans are 0/1 BIGINTs. Every state
-- change that must happen once is one conditional UPDATE on `status`, and only the caller whose
-- UPDATE changed a row acts on it (records the receipt, wakes waiters).

CREATE TABLE approvals (
    id TEXT PRIMARY KEY,
    -- The same request id yields the same approval (idempotency).
    request_id TEXT NOT NULL UNIQUE,
    agent TEXT NOT NULL,
    session TEXT NOT NULL,
    -- The canonical (RFC 8785) action and its SHA-256: an answer is bound to this hash.
    action TEXT NOT NULL,
    action_sha256 TEXT NOT NULL,
    tier BIGINT NOT NULL,
    -- JSON: the reasons (findings) shown to approvers and carried by the receipt.
    reasons TEXT NOT NULL,
    policy_sha256 TEXT NOT NULL,
    -- none | llm | human | llm+human
    confirm TEXT NOT NULL,
    -- Tier 4: the approver types the deliberate code derived from action_sha256.
    deliberate BIGINT NOT NULL DEFAULT 0,
    time_lock_ms BIGINT NOT NULL DEFAULT 0,
    -- pending | locked (approved, time lock running) | approved | denied | expired | cancelled
    status TEXT NOT NULL,
    -- JSON of the LLM review, once it answered or failed (written once).
    llm TEXT,
    decided_by TEXT,
    -- 1 when a person (not the LLM, not the clock) made the decision.
    by_person BIGINT NOT NULL DEFAULT 0,
    -- Everyone who approved, as a JSON list (`llm:<model>`, a person's name).
    approvers TEXT,
    scope TEXT,
    reason TEXT,
    grant_id TEXT,
    -- A policy rule text suggested after repeated approvals of the same action; never applied.
    suggestion TEXT,
    created_ms BIGINT NOT NULL,
    deadline_ms BIGINT NOT NULL,
    decided_ms BIGINT,
    effective_ms BIGINT,
    -- The receipt of the final decision; NULL until written (recovered at start).
    receipt TEXT,
    CHECK (status IN ('pending', 'locked', 'approved', 'denied', 'expired', 'cancelled')),
    CHECK (deliberate IN (0, 1) AND by_person IN (0, 1))
);

CREATE INDEX approvals_status ON approvals (status, deadline_ms);
CREATE INDEX approvals_session ON approvals (session, created_ms);
CREATE INDEX approvals_action ON approvals (agent, action_sha256, status);

-- One-time links of the webhook channel: a link is spent the first time it is used.
CREATE TABLE approval_links (
    nonce TEXT PRIMARY KEY,
    approval TEXT NOT NULL REFERENCES approvals (id),
    decision TEXT NOT NULL,
    expires_ms BIGINT NOT NULL,
    used_ms BIGINT,
    CHECK (decision IN ('approve', 'deny'))
);

-- Consecutive denials per session (any denial: by the policy, a person, the LLM or the clock);
-- an allow resets it. Read into the policy's context and the agent's message.
CREATE TABLE approval_streaks (
    session TEXT PRIMARY KEY,
    denials BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL
);
