-- Budgets of the model proxy (airlock-gateway): what each agent token used in each period
-- (fixed windows; `period_start` is unix milliseconds). A request is admitted and counted in
-- one conditional upsert, so concurrent requests can never both take the last unit.

CREATE TABLE budgets (
    agent TEXT NOT NULL,
    period_start BIGINT NOT NULL,
    requests BIGINT NOT NULL,
    tokens BIGINT NOT NULL,
    -- In millionths of the configured price unit.
    cost_micros BIGINT NOT NULL,
    PRIMARY KEY (agent, period_start)
);
