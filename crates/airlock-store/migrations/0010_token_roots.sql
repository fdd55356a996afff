-- The workspace roots registered for an agent token (airlock-gateway): a REST submission of that
-- token whose working directory (or a `cd` of its command line) lies outside every root is
-- refused, so an agent cannot choose the directory, and with it the project policy, its actions
-- are judged by. A token without rows here has no registered roots.

CREATE TABLE token_roots (
    token TEXT NOT NULL REFERENCES tokens (id),
    -- An absolute, lexically normalised directory.
    root TEXT NOT NULL,
    PRIMARY KEY (token, root)
);
