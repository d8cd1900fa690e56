package io.slipstream.store;

import java.util.ArrayList;
import java.util.List;

/**
 * How a closed segment adds to the hourly and daily (UTC) roll-ups a database store keeps: its time split at hour and
 * day boundaries, and its lost work in the hour and the day it ended in. Pure.
 */
public final class UsageBuckets {
    public static final long HOUR = 3_600_000L;
    public static final long DAY = 24 * HOUR;

    /** What one segment adds to one bucket: {@code ms} of its time, and its lost work if it ended there. */
    public record Share(char grain, long bucketMs, long ms, boolean endsHere) {
    }

    private UsageBuckets() {
    }

    /** The shares of a segment from {@code startMs} to {@code endMs} ({@code >= startMs}), hourly ({@code 'H'}) and daily ({@code 'D'}). */
    public static List<Share> split(long startMs, long endMs) {
        List<Share> shares = new ArrayList<>();
        split('H', HOUR, startMs, endMs, shares);
        split('D', DAY, startMs, endMs, shares);
        return shares;
    }

    private static void split(char grain, long size, long startMs, long endMs, List<Share> shares) {
        long ending = floor(endMs, size);
        for (long bucket = floor(startMs, size); bucket <= ending; bucket += size) {
            long ms = Math.max(0, Math.min(endMs, bucket + size) - Math.max(startMs, bucket));
            boolean endsHere = bucket == ending;
            if (ms > 0 || endsHere) {
                shares.add(new Share(grain, bucket, ms, endsHere));
            }
        }
    }

    public static long floor(long ms, long size) {
        return Math.floorDiv(ms, size) * size;
    }

    public static long ceil(long ms, long size) {
        return -Math.floorDiv(-ms, size) * size;
    }
}
