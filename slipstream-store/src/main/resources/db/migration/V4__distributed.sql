-- Where each instance is reached (host, IP, ports: given at admission, before any instance starts) and when it
-- became ready (its startup probe passed), which InOrder startup waits for.
ALTER TABLE instances ADD COLUMN endpoint TEXT;
ALTER TABLE instances ADD COLUMN ready_at TIMESTAMP WITH TIME ZONE;
