package io.slipstream.executor.local.cgroup;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Where this host mounts its cgroup hierarchies, read from {@code /proc/self/mountinfo}: the v1 hierarchy of each
 * controller (two controllers may share one, as {@code cpu,cpuacct} often do), and the v2 (unified) hierarchy if there
 * is one. Pure: the caller reads the file.
 *
 * @param v1      controller name to the mount point of its v1 hierarchy
 * @param unified the v2 hierarchy's mount point, or {@code null}
 */
public record CgroupMounts(Map<String, Path> v1, Path unified) {
    /** The v1 controllers this executor uses (cpuacct for CPU time, freezer to kill). */
    static final Set<String> V1_CONTROLLERS = Set.of("memory", "cpu", "cpuacct", "cpuset", "pids", "freezer", "devices");

    public CgroupMounts {
        v1 = Map.copyOf(v1);
    }

    /**
     * Parses mountinfo: {@code ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS}. The
     * first mount of a hierarchy wins (a bind mount of it elsewhere changes nothing); names ({@code name=systemd}) are
     * not controllers.
     */
    public static CgroupMounts parse(String mountinfo) {
        Map<String, Path> v1 = new LinkedHashMap<>();
        Path unified = null;
        for (String line : mountinfo.split("\n")) {
            List<String> fields = List.of(line.trim().split(" "));
            int separator = fields.indexOf("-");
            if (separator < 6 || fields.size() < separator + 4) {
                continue;
            }
            String type = fields.get(separator + 1);
            Path mountPoint = Path.of(unescape(fields.get(4)));
            if (type.equals("cgroup2") && unified == null) {
                unified = mountPoint;
            } else if (type.equals("cgroup")) {
                for (String option : fields.get(separator + 3).split(",")) {
                    if (V1_CONTROLLERS.contains(option)) {
                        v1.putIfAbsent(option, mountPoint);
                    }
                }
            }
        }
        return new CgroupMounts(v1, unified);
    }

    /** mountinfo writes a space, tab, newline and backslash in a path as an octal escape ({@code \040}). */
    private static String unescape(String field) {
        StringBuilder out = new StringBuilder(field.length());
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            if (c == '\\' && i + 3 < field.length() && field.substring(i + 1, i + 4).matches("[0-7]{3}")) {
                out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
