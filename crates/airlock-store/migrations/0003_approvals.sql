-- Approvals (airlock-confirm): actions waiting for an LLM reviewer and/or a person. Portable SQL
-- (SQLite and PostgreSQL); times are unix milliseconds; booleans are 0/1 BIGINTs. Every state
-- change that must happen once is one conditional UPDATE on `status`.

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
    -- JSON: the policy's verdict (reasons, requirement) shown to approvers.
    verdict TEXT NOT NULL,
    policy_sha256 TEXT NOT NULL,
    -- none | llm | human | llm+human
    confirm TEXT NOT NULL,
    deliberate BIGINT NOT NULL DEFAULT 0,
    time_lock_ms BIGINT NOT NULL DEFAULT 0,
    -- pending | locked (approved, time lock running) | approved | denied | expired | cancelled
    status TEXT NOT NULL,
    -- JSON of the LLM review, once it answered or failed.
    llm TEXT,
    decided_by TEXT,
    scope TEXT,
    reason TEXT,
    grant_id TEXT,
    created_ms BIGINT NOT NULL,
    deadline_ms BIGINT NOT NULL,
    decided_ms BIGINT,
    effective_ms BIGINT,
    -- The receipt of the final decision; NULL until written (recovered at start).
    receipt TEXT,
    CHECK (status IN ('pending', 'locked', 'approved', 'denied', 'expired', 'cancelled'))
);

CREATE INDEX approvals_status ON approvals (status, deadline_ms);
CREATE INDEX approvals_session ON approvals (session, created_ms);
CREATE INDEX approvals_action ON approvals (agent, action_sha256);

-- One-time links of the webhook channel: a link is spent the first time it is used.
CREATE TABLE approval_links (
    nonce TEXT PRIMARY KEY,
    approval TEXT NOT NULL REFERENCES approvals (id),
    decision TEXT NOT NULL,
    expires_ms BIGINT NOT NULL,
    used_ms BIGINT
);
