-- Ledger tables: receipts, their per-session chain heads, checkpoints and trust-registry events.
-- Portable SQL (SQLite and PostgreSQL). Later tables (approvals, grants, sessions) sit beside
-- these and may reference receipts(id).

-- One row; every writer updates it first, which serialises appends across processes and nodes
-- (a row lock on PostgreSQL, the write lock on SQLite).
CREATE TABLE ledger_state (
    id BIGINT PRIMARY KEY CHECK (id = 1),
    next_leaf BIGINT NOT NULL,
    checkpoint_size BIGINT NOT NULL,
    checkpoint_at_ms BIGINT NOT NULL,
    writes BIGINT NOT NULL
);
INSERT INTO ledger_state (id, next_leaf, checkpoint_size, checkpoint_at_ms, writes) VALUES (1, 0, 0, 0, 0);

CREATE TABLE receipts (
    leaf BIGINT PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    request_id TEXT NOT NULL UNIQUE,
    session TEXT NOT NULL,
    lamport BIGINT NOT NULL,
    hash TEXT NOT NULL,
    body TEXT NOT NULL,
    -- The canonical action (command or tool arguments) the receipt hashes, kept for replay.
    payload TEXT,
    created_ms BIGINT NOT NULL,
    UNIQUE (session, lamport)
);

CREATE TABLE ledger_heads (
    session TEXT PRIMARY KEY,
    lamport BIGINT NOT NULL,
    head TEXT NOT NULL
);

CREATE TABLE checkpoints (
    size BIGINT PRIMARY KEY,
    body TEXT NOT NULL
);

CREATE TABLE registry_events (
    seq BIGINT PRIMARY KEY,
    body TEXT NOT NULL
);
