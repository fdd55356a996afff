-- The MCP gateway's pins (airlock-gateway `mcp`): per server and tool, the SHA-256 of the RFC 8785
-- canonical form of the tool's description and input schema as first seen. A tool whose
-- definition changes is quarantined (hidden, calls denied) until a person approves the new
-- hash. Times are unix milliseconds.

CREATE TABLE mcp_pins (
    server TEXT NOT NULL,
    tool TEXT NOT NULL,
    -- The approved hash.
    sha256 TEXT NOT NULL,
    -- approved | quarantined
    status TEXT NOT NULL,
    -- The hash the server now presents, while quarantined.
    pending_sha256 TEXT,
    first_seen_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL,
    PRIMARY KEY (server, tool),
    CHECK (status IN ('approved', 'quarantined'))
);
