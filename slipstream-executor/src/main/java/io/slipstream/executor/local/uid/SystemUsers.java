package io.slipstream.executor.local.uid;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The uids this machine's users have ({@code /etc/passwd}) and the subordinate ranges given to them
 * ({@code /etc/subuid}, {@code /etc/subgid}): no claimed range may hold any of them ({@link UidRangeClaims}).
 */
final class SystemUsers {
    private SystemUsers() {
    }

    /** The uids of this machine's users, and the subordinate ranges given to them. */
    static List<UidRangeClaims.Range> ranges() {
        List<UidRangeClaims.Range> ranges = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(Path.of("/etc/passwd"), StandardCharsets.UTF_8)) {
                String[] fields = line.split(":");
                if (fields.length > 2 && fields[2].matches("\\d{4,10}") && Long.parseLong(fields[2]) <= UidRangeClaims.HIGHEST) {
                    ranges.add(new UidRangeClaims.Range(Integer.parseInt(fields[2]), 1));
                }
            }
        } catch (IOException e) {
            // no passwd file: nothing to avoid
        }
        for (String subordinate : new String[] {"/etc/subuid", "/etc/subgid"}) {
            try {
                for (String line : Files.readAllLines(Path.of(subordinate), StandardCharsets.UTF_8)) {
                    String[] fields = line.split(":");
                    if (fields.length == 3 && fields[1].matches("\\d{1,10}") && fields[2].matches("\\d{1,10}")) {
                        long first = Math.max(1000, Long.parseLong(fields[1]));
                        long last = Math.min(UidRangeClaims.HIGHEST, Long.parseLong(fields[1]) + Long.parseLong(fields[2]) - 1);
                        if (last >= first) {
                            ranges.add(new UidRangeClaims.Range((int) first, (int) (last - first + 1)));
                        }
                    }
                }
            } catch (IOException e) {
                // none
            }
        }
        return ranges;
    }
}
