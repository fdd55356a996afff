-- PostgreSQL: the receipt id is a hash of the request id, so `id UNIQUE` enforces what the
-- unique index on `request_id` did, and idempotency lookups now go by id. Dropping the second
-- index of random keys saves a page write per append. (The leaf stays the primary key.)
ALTER TABLE receipts DROP CONSTRAINT IF EXISTS receipts_request_id_key;
