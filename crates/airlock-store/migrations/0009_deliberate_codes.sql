-- Tier-4 deliberate codes (airlock-confirm): keyed with a secret the store keeps, so an agent
-- that knows an action's hash cannot compute its code, and wrong codes counted per approval,
-- so they cannot be tried without limit. Portable SQL (SQLite and PostgreSQL).

CREATE TABLE store_secrets (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

ALTER TABLE approvals ADD COLUMN code_failures BIGINT NOT NULL DEFAULT 0;
