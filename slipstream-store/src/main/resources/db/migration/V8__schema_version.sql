-- The version of the stored JSON (documents' body, runs' spec): the reader upgrades older rows step by step and
-- refuses, by name, a row written by a newer server (StoredFormat). Rows written before carry version 1.
ALTER TABLE documents ADD COLUMN schema_version INTEGER DEFAULT 1 NOT NULL;
ALTER TABLE runs ADD COLUMN schema_version INTEGER DEFAULT 1 NOT NULL;
