package io.slipstream.api.wire;

/**
 * Which replica leads the control loop over the store: its holder name (host~tag:pid:random, one per process start),
 * the fencing epoch it leads at, when it last renewed its lease and when the lease ends unless renewed. An expired
 * lease means no replica leads now (a standby takes it at its next claim).
 */
public record LeaderView(String holder, long epoch, String renewedAt, String expiresAt, boolean expired) {
}
