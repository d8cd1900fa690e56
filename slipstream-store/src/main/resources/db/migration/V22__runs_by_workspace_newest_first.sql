-- A page of a workspace's runs, newest first (ORDER BY workspace, created_at DESC, id DESC LIMIT n), is read from this
-- index in its order, stopping after the page: with (workspace, created_at) every run of the workspace was read and
-- sorted for each page (with 20,000 runs in a workspace, a page took a fifth of a second).
DROP INDEX runs_by_workspace;
CREATE INDEX runs_by_workspace ON runs (workspace, created_at DESC, id DESC);
