-- Capabilities (airlock-grants). Portable SQL (SQLite and PostgreSQL). Times are unix
-- milliseconds. A grant's scope is JSON text that airlock-grants reads and matches; the store only
-- keeps rows, counts uses atomically and cascades revocations down the `parent` links.

CREATE TABLE grants (
    id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    -- NULL: every session of the agent.
    session TEXT,
    -- once | session | permanent
    kind TEXT NOT NULL,
    scope TEXT NOT NULL,
    max_uses BIGINT NOT NULL,
    uses BIGINT NOT NULL DEFAULT 0,
    expires_ms BIGINT NOT NULL,
    parent TEXT REFERENCES grants (id),
    -- JSON: {"person": {"name": …}} | {"grant": {"id": …}} | {"llm": {"model": …}}
    creator TEXT NOT NULL,
    -- proposed | active
    status TEXT NOT NULL,
    confirmed_by TEXT,
    confirmed_ms BIGINT,
    created_ms BIGINT NOT NULL,
    revoked_ms BIGINT,
    revoke_reason TEXT,
    reason TEXT NOT NULL,
    -- The last line of defence: no statement can count a use past the maximum.
    CHECK (max_uses >= 1 AND uses >= 0 AND uses <= max_uses),
    CHECK (status IN ('proposed', 'active')),
    CHECK (kind IN ('once', 'session', 'permanent'))
);

CREATE INDEX grants_subject ON grants (agent, session);
CREATE INDEX grants_parent ON grants (parent);
CREATE INDEX grants_session ON grants (session, kind);
