-- Who may talk to the daemon (airlock-gateway): bearer tokens with a role, stored only as their
-- SHA-256, and the web inbox's login sessions (the cookie's SHA-256 and its CSRF token).
-- Times are unix milliseconds.

CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    -- The principal's name: an agent token's name is the agent that submits actions.
    name TEXT NOT NULL,
    -- agent | approver | admin
    role TEXT NOT NULL,
    sha256 TEXT NOT NULL UNIQUE,
    created_ms BIGINT NOT NULL,
    revoked_ms BIGINT,
    CHECK (role IN ('agent', 'approver', 'admin'))
);

CREATE TABLE web_sessions (
    -- SHA-256 of the session id the browser holds in its cookie.
    sha256 TEXT PRIMARY KEY,
    token TEXT NOT NULL REFERENCES tokens (id),
    -- Sent back in every form; useless without the cookie, so kept as is.
    csrf TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL
);

CREATE INDEX web_sessions_token ON web_sessions (token);
