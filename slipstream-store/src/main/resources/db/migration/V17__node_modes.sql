-- What an administrator declared of a node: Down (as every row before this version), Draining (moved off with the
-- usual notice, then cordoned) or Cordoned (nothing new is placed there; what runs there keeps running). A NodeMode
-- name; one a build does not know reads as Cordoned.
ALTER TABLE nodes_down ADD COLUMN mode VARCHAR(16) NOT NULL DEFAULT 'Down';
