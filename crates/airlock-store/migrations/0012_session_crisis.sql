-- Sessions in crisis mode: a crisis verdict on the person's text (a hook's prompt, the proxy's
-- inbound messages, the MCP gateway, `POST /v1/scan`) marks the session; every later policy
-- evaluation of it runs in crisis mode (support tools never gated, decision tools need a
-- person) until an approver clears it. One row per session in crisis; clearing deletes the row
-- (the mark and the clearing are receipts in the ledger). Shared by every node of a PostgreSQL
-- store. Times are unix milliseconds.

CREATE TABLE session_crisis (
    session TEXT PRIMARY KEY,
    since_ms BIGINT NOT NULL,
    -- The surface that saw the crisis (`hook:claude`, `proxy`, `mcp:<server>`, `scan`).
    source TEXT NOT NULL,
    -- The scanner's first crisis rule, or the verdict.
    rule TEXT NOT NULL,
    -- Whose traffic it was (the agent's principal).
    agent TEXT NOT NULL
);
