-- An elastic run's current world (docs/elastic.md): its version, the slots in it, those on idle capacity, those a
-- shrink is removing, and whether it is changing; JSON, read as ElasticWorld. NULL: a rigid run, or one queued, as
-- for every run stored before this version.
ALTER TABLE runs ADD COLUMN world TEXT;
