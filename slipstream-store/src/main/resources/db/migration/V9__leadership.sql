-- One control loop at a time over a store shared by replicas: the lease of the leader (one row per role; today
-- 'control-loop'). epoch grows by one at every change of holder and fences the old one: every write transaction
-- of a control loop locks this row and checks the epoch it leads at, and executors refuse side effects of an older
-- epoch. (V8 is reserved for the stored-format version of documents and runs.)
CREATE TABLE leadership (
    role       VARCHAR(32)  NOT NULL PRIMARY KEY,
    holder     VARCHAR(255) NOT NULL,
    epoch      BIGINT       NOT NULL,
    renewed_at TIMESTAMP WITH TIME ZONE NOT NULL,
    expires_at TIMESTAMP WITH TIME ZONE NOT NULL
);
