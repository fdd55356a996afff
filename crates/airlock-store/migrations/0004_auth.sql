-- Who may talk to the daemon (airlock-gateway): bearer tokens with a role, stored only as their
-- SHA-256, and the web inbox's login sessions (cookie and CSRF token, also stored hashed).

CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    -- agent | approver | admin
    role TEXT NOT NULL,
    sha256 TEXT NOT NULL UNIQUE,
    created_ms BIGINT NOT NULL,
    revoked_ms BIGINT,
    CHECK (role IN ('agent', 'approver', 'admin'))
);

CREATE TABLE web_sessions (
    sha256 TEXT PRIMARY KEY,
    token TEXT NOT NULL REFERENCES tokens (id),
    csrf TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL
);
