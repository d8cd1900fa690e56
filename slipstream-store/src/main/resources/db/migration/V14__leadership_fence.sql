-- The fence apart from the lease (V9): every write transaction of a control loop locks this row and checks the epoch
-- it leads at, while renewals of the lease write only their own row in leadership, so a leader's renewals never wait
-- for its own writes (under load they waited out the lock timeout). A new epoch is written to both rows in one
-- transaction; its write of this row waits until no transaction of the old epoch is open.
CREATE TABLE leadership_fence (
    role  VARCHAR(32) NOT NULL PRIMARY KEY,
    epoch BIGINT      NOT NULL
);
INSERT INTO leadership_fence (role, epoch) SELECT role, epoch FROM leadership;
