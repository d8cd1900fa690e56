package io.slipstream.scheduler;

import static io.slipstream.scheduler.Builders.aNode;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The domains' free totals always equal the sums of their nodes' free capacity (negative free cpu or memory counting
 * as none), through holds, releases, batches, overcommit, placements and tentatives kept or undone; seeded.
 */
class DomainsTest {
    /** Domains' totals always equal the sums of their nodes' clamped free capacity, through holds, releases, overcommit and undo. */
    @Test
    void domainTotalsFollowTheirNodes() {
        for (long seed = 1; seed <= 150; seed++) {
            Random random = new Random(seed);
            List<NodeState> states = new ArrayList<>();
            int count = 3 + random.nextInt(10);
            for (int i = 0; i < count; i++) {
                int labels = random.nextInt(4); // 0..3 levels
                String[] d = new String[] {"b" + random.nextInt(2), "r" + random.nextInt(3), "h" + i};
                List<String> domains = new ArrayList<>(List.of(d).subList(0, labels));
                if (labels == 3 && random.nextInt(5) == 0) {
                    domains.set(1, ""); // a gap: none below either
                }
                var builder = aNode("n" + i).gpus(random.nextBoolean() ? 8 : 4).in(domains.toArray(String[]::new));
                if (random.nextInt(6) == 0) {
                    builder.unschedulable();
                }
                states.add(builder.build());
            }
            Journal journal = new Journal();
            WorkingCluster cluster = new WorkingCluster(states, journal);
            List<Allocation> held = new ArrayList<>();
            List<Tentative> open = new ArrayList<>();
            for (int step = 0; step < 200; step++) {
                int op = random.nextInt(8);
                String node = "n" + random.nextInt(count);
                // Allocations may exceed a node (its capacity shrank): cpu and memory go negative, GPU indices beyond it.
                int gpus = random.nextInt(5);
                List<Integer> indices = new ArrayList<>();
                int cap = cluster.node(node).capacity.gpu();
                int first = random.nextInt(cap);
                for (int g = 0; g < Math.min(gpus, cap); g++) {
                    indices.add((first + g) % cap); // within the node (indices beyond it break NodeBuckets, before these commits too)
                }
                Allocation allocation = new Allocation(step, node, new Resources(random.nextInt(40_000), random.nextInt(300) * Builders.GI, gpus, null), indices);
                QuotaId pin = random.nextBoolean() ? QuotaId.parse("a/gpu") : null;
                switch (op) {
                    case 0, 1 -> {
                        cluster.hold(allocation);
                        held.add(allocation);
                    }
                    case 2 -> {
                        if (!held.isEmpty()) {
                            cluster.release(held.remove(random.nextInt(held.size())));
                        }
                    }
                    case 3 -> {
                        List<Allocation> batch = List.of(allocation, new Allocation(step, "n" + random.nextInt(count), allocation.resources(), List.of()));
                        List<QuotaId> pins = new ArrayList<>();
                        pins.add(pin);
                        pins.add(null);
                        cluster.holdAll(batch, pins);
                        held.addAll(batch);
                    }
                    case 4 -> open.add(cluster.tentative());
                    case 5 -> {
                        if (!open.isEmpty()) {
                            Tentative t = open.remove(open.size() - 1);
                            if (random.nextBoolean()) {
                                t.commit();
                            } else {
                                t.discard();
                                held.clear(); // what is held is no longer known exactly: only release what is added later
                            }
                        }
                    }
                    case 6 -> {
                        WorkingNode n = cluster.node(node);
                        Resources r = new Resources(1000, Builders.GI, 1, null);
                        if (n.schedulable && n.fitsNow(r)) {
                            cluster.take(n, r);
                        }
                    }
                    default -> {
                        try (Tentative trial = cluster.tentative()) {
                            cluster.placeGang(List.of(new InstanceRequest(0, "g", new Resources(1000, Builders.GI, 1, null), new Locality(1, "rack", true, 1, 2, "host"))), null);
                        }
                    }
                }
                check(cluster, seed, step);
            }
            while (!open.isEmpty()) {
                open.remove(open.size() - 1).discard();
                check(cluster, seed, -1);
            }
        }
    }

    private static void check(WorkingCluster cluster, long seed, int step) {
        for (int level = 0; level < 3; level++) {
            for (Domains.Domain domain : cluster.domainsAt(level)) {
                long cpu = 0;
                long memory = 0;
                long gpus = 0;
                for (WorkingNode node : domain.nodes) {
                    cpu += Math.max(0, node.freeMilliCpu);
                    memory += Math.max(0, node.freeMemory);
                    gpus += node.freeGpuCount();
                }
                assertThat(new long[] {domain.freeMilliCpu, domain.freeMemory, domain.freeGpus}).as("seed %d step %d domain %s", seed, step, domain.path)
                        .containsExactly(cpu, memory, gpus);
            }
        }
        for (WorkingNode node : cluster.nodeList()) {
            for (int level = 0; level < node.domainPaths.length; level++) {
                boolean member = node.schedulable && node.domainPaths[level] != null;
                assertThat(node.domains[level] != null).as("node %s level %d", node.name, level).isEqualTo(member);
            }
        }
    }

}
