import java.lang.management.ManagementFactory;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Two builds of the scheduling core in one JVM, each in a class loader of its own, their benchmarks alternated (and
 * which goes first alternated too), medians over the rounds: on a shared machine, separate JVMs one after the other
 * differ by more than most changes do. Both run the head's benchmark classes (bench-classes, found first), so that
 * only the core differs. {@code never}: the second build with fairSharing.preemption Never.
 *
 * <p>Usage: {@code java CoreAB.java CLASSPATH_FILE BASE_DIR HEAD_DIR scheduler|reclaim ROUNDS [sides, default base,head]}
 */
public class CoreAB {
    public static void main(String[] args) throws Exception {
        String[] deps = Files.readString(Path.of(args[0])).trim().split(":");
        Map<String, String> dirs = Map.of("base", args[1], "head", args[2], "never", args[2]);
        String benchmark = args[3];
        int rounds = Integer.parseInt(args[4]);
        List<String> sides = List.of((args.length > 5 ? args[5] : "base,head").split(","));
        Map<String, ClassLoader> loaders = new LinkedHashMap<>();
        for (String side : sides) {
            List<URL> urls = new ArrayList<>();
            urls.add(Path.of(args[2], "target/compare/bench-classes").toUri().toURL()); // this checkout's benchmarks, on both sides
            for (String module : new String[] {"slipstream-scheduler/target/test-classes", "slipstream-scheduler/target/classes",
                    "slipstream-api/target/classes", "slipstream-testing/target/classes"}) {
                urls.add(Path.of(dirs.get(side), module).toUri().toURL());
            }
            for (String dep : deps) {
                if (!dep.contains("io/slipstream")) {
                    urls.add(Path.of(dep).toUri().toURL());
                }
            }
            loaders.put(side, new URLClassLoader(side, urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())); // named: a profile tells the sides apart
        }
        Map<String, List<Double>> results = new TreeMap<>();
        Map<String, List<Double>> pooled = new TreeMap<>();
        for (int round = 0; round < rounds; round++) {
            List<String> order = new ArrayList<>(sides);
            if (round % 2 == 1) {
                Collections.reverse(order);
            }
            for (String side : order) {
                ClassLoader loader = loaders.get(side);
                Class<?> type = loader.loadClass(benchmark.equals("reclaim") ? "io.slipstream.scheduler.ReclaimBenchmark" : "io.slipstream.scheduler.SchedulerBenchmark");
                Constructor<?> constructor = type.getDeclaredConstructor();
                constructor.setAccessible(true);
                Object bench = constructor.newInstance();
                if (side.equals("never")) {
                    Class<?> defragmentation = loader.loadClass("io.slipstream.scheduler.Defragmentation");
                    @SuppressWarnings({"unchecked", "rawtypes"})
                    Object never = Enum.valueOf((Class) loader.loadClass("io.slipstream.scheduler.FairSharingPreemption"), "Never");
                    Object scheduler = loader.loadClass("io.slipstream.scheduler.Scheduler")
                            .getConstructor(defragmentation, never.getClass()).newInstance(defragmentation.getField("DEFAULT").get(null), never);
                    Field field = type.getDeclaredField("scheduler");
                    field.setAccessible(true);
                    field.set(bench, scheduler);
                }
                long allocated = allocatedBytes();
                long gcMillis = gcMillis();
                if (benchmark.equals("reclaim")) {
                    Method scenario = type.getDeclaredMethod("scenario");
                    scenario.setAccessible(true);
                    Map<?, ?> report = (Map<?, ?>) scenario.invoke(bench);
                    record(results, "", side, report, "cycleMillisP50", "cycleCpuMillisP50", "cycleMillisP99", "sameCycleWithoutOwnersMillisP50", "victims", "fairnessVictims");
                    if (report.containsKey("cycleMillisEach")) {
                        for (String key : List.of("cycleMillisEach", "cycleCpuMillisEach")) {
                            for (Object value : (List<?>) report.get(key)) {
                                pooled.computeIfAbsent(key + " " + side, k -> new ArrayList<>()).add(((Number) value).doubleValue());
                            }
                        }
                    }
                } else {
                    Method measure = type.getDeclaredMethod("measure", int.class);
                    measure.setAccessible(true);
                    for (int nodes : new int[] {500, 5_000, 10_000}) {
                        long cpu = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
                        Map<?, ?> row = (Map<?, ?>) measure.invoke(bench, nodes);
                        results.computeIfAbsent(nodes + " nodes cpuMillis " + side, k -> new ArrayList<>())
                                .add((ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() - cpu) / 1e6);
                        record(results, nodes + " nodes ", side, row, "fullCycleMillis", "fullClusterCycleMillis");
                    }
                }
                // What the side allocated and the collector's pauses meanwhile: a CPU profile shows neither.
                results.computeIfAbsent("allocatedMB " + side, k -> new ArrayList<>()).add((allocatedBytes() - allocated) / 1e6);
                results.computeIfAbsent("gcMillis " + side, k -> new ArrayList<>()).add((double) (gcMillis() - gcMillis));
                System.gc();
            }
            System.err.println("round " + (round + 1) + " of " + rounds);
        }
        // The cycles of every round together: a p99 over rounds × 120 cycles, not the median of each round's second largest.
        pooled.forEach((key, values) -> {
            List<Double> sorted = new ArrayList<>(values);
            Collections.sort(sorted);
            for (int p : new int[] {50, 90, 99}) {
                results.put("pooled " + key.replace("Each", "P" + p), List.of(sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p / 100.0 * sorted.size()) - 1))));
            }
        });
        Map<String, Map<String, Double>> medians = new TreeMap<>();
        results.forEach((key, values) -> {
            int cut = key.lastIndexOf(' ');
            medians.computeIfAbsent(key.substring(0, cut), k -> new LinkedHashMap<>()).put(key.substring(cut + 1), median(values));
        });
        medians.forEach((figure, bySide) -> {
            StringBuilder line = new StringBuilder(String.format("%-36s", figure));
            Double base = bySide.get("base");
            for (String side : sides) {
                Double value = bySide.get(side);
                line.append(String.format("  %s %.1f", side, value));
                if (base != null && !side.equals("base")) {
                    // Also round by round: the two sides of a round ran back to back, so a machine that slows down
                    // for a while slows both; the median of those ratios, and the middle half of them.
                    List<Double> bases = results.get(figure + " base");
                    List<Double> mine = results.get(figure + " " + side);
                    List<Double> paired = new ArrayList<>();
                    for (int i = 0; i < Math.min(bases.size(), mine.size()); i++) {
                        paired.add(mine.get(i) / bases.get(i));
                    }
                    Collections.sort(paired);
                    line.append(String.format(" (%.3f; by round %.3f, %.3f-%.3f)", value / base, median(paired), paired.get(paired.size() / 4),
                            paired.get((paired.size() * 3 - 1) / 4)));
                }
            }
            System.out.println(line);
        });
    }

    private static long allocatedBytes() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    private static long gcMillis() {
        return ManagementFactory.getGarbageCollectorMXBeans().stream().mapToLong(java.lang.management.GarbageCollectorMXBean::getCollectionTime).sum();
    }

    private static void record(Map<String, List<Double>> results, String prefix, String side, Map<?, ?> row, String... keys) {
        for (String key : keys) {
            results.computeIfAbsent(prefix + key + " " + side, k -> new ArrayList<>()).add(((Number) row.get(key)).doubleValue());
        }
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }
}
