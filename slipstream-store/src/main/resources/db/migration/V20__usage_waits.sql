-- The waits that ended in each hour and day: queued segments that closed with their run starting (admitted, or
-- started again after a requeue), counted where they ended, like work lost: how many, their time in all, and the
-- longest, in milliseconds. A console chart shows their mean and longest beside the queue's length. Roll-ups from
-- before this version count none (their waits were not told apart from queued time given up on).
ALTER TABLE usage_rollups ADD COLUMN waits BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_rollups ADD COLUMN waited_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_rollups ADD COLUMN longest_wait_ms BIGINT NOT NULL DEFAULT 0;
