-- The definition (RFC 8785 canonical JSON of the tool's description and input schema) that a
-- quarantined tool now presents, so the person asked to re-approve it can read what changed
-- instead of approving a hash. Cleared with pending_sha256 when approved.

ALTER TABLE mcp_pins ADD COLUMN pending_definition TEXT;
