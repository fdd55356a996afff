-- SQLite: rebuild the receipts table so that an append dirties fewer pages.
-- * `leaf INTEGER PRIMARY KEY` makes the leaf the table's own key (SQLite's rowid), so rows are
--   stored in leaf order and there is no separate index on it.
-- * No index on `request_id`: the receipt id is a hash of the request id, so `id UNIQUE`
--   enforces the same thing, and idempotency lookups go by id. That was a second index of
--   random keys, and every append wrote a random page of it to the WAL.
-- PostgreSQL runs 0008_receipt_keys.pg.sql instead (same constraints, its own syntax).
CREATE TABLE receipts_v8 (
    leaf INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    request_id TEXT NOT NULL,
    session TEXT NOT NULL,
    lamport BIGINT NOT NULL,
    hash TEXT NOT NULL,
    body TEXT NOT NULL,
    payload TEXT,
    created_ms BIGINT NOT NULL,
    UNIQUE (session, lamport)
);
INSERT INTO receipts_v8 (leaf, id, request_id, session, lamport, hash, body, payload, created_ms)
    SELECT leaf, id, request_id, session, lamport, hash, body, payload, created_ms FROM receipts;
DROP TABLE receipts;
ALTER TABLE receipts_v8 RENAME TO receipts;
