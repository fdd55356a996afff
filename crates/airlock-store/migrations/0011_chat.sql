-- Chat channels (airlock-chat: Telegram, Discord, Slack). Portable SQL; times are unix ms.

-- Where a person answered an approval from, e.g. `telegram:bot/chat=42/message=7` (NULL for the
-- inbox, the terminal and the REST API); the receipt names it.
ALTER TABLE approvals ADD COLUMN answered_via TEXT;

-- The next update a long-polling bot asks for (Telegram `getUpdates` offset), per bot, so a
-- restart neither loses nor repeats answers.
CREATE TABLE chat_offsets (
    bot TEXT PRIMARY KEY,
    next_update BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL
);

-- Leases: one holder (a broker instance) at a time per name (one poller per bot token across
-- the nodes of a shared PostgreSQL). Taken when free or expired, renewed by its holder; a node
-- that dies stops renewing and another takes over after `expires_ms`.
CREATE TABLE chat_leases (
    name TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    expires_ms BIGINT NOT NULL
);

-- One message per (channel, approval, chat): claimed before it is sent (so it is sent once
-- across nodes), then its platform id, then closed when the approval is final.
CREATE TABLE chat_messages (
    channel TEXT NOT NULL,
    approval TEXT NOT NULL REFERENCES approvals (id),
    chat TEXT NOT NULL,
    -- The platform's message id once sent.
    message TEXT,
    -- Random, bound by a MAC into the buttons' callback data.
    nonce TEXT NOT NULL UNIQUE,
    -- What a person types (`/approve CODE`): the tier-4 code, or a random one below tier 4.
    ref_code TEXT NOT NULL,
    -- sending | sent | failed (undeliverable) | closed
    state TEXT NOT NULL,
    -- How it ended for this message: approved | denied (answered here), timed_out, cancelled,
    -- superseded (answered elsewhere), undeliverable, notice (a one-way notice, no answer).
    outcome TEXT,
    created_ms BIGINT NOT NULL,
    closed_ms BIGINT,
    PRIMARY KEY (channel, approval, chat),
    CHECK (state IN ('sending', 'sent', 'failed', 'closed'))
);

CREATE INDEX chat_messages_ref ON chat_messages (channel, chat, ref_code);
CREATE INDEX chat_messages_state ON chat_messages (channel, state);

-- Answers refused before the broker saw them (a stranger's tap, a forged or expired button), so
-- who tried is on record.
CREATE TABLE chat_refusals (
    channel TEXT NOT NULL,
    user_id TEXT NOT NULL,
    chat TEXT NOT NULL,
    approval TEXT,
    what TEXT NOT NULL,
    at_ms BIGINT NOT NULL
);

CREATE INDEX chat_refusals_at ON chat_refusals (at_ms);
