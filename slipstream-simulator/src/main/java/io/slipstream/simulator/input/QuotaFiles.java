package io.slipstream.simulator.input;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.codec.DocumentParser;
import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.QuotaSpec;
import io.slipstream.api.spec.QuotaType;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.SpecReader;
import io.slipstream.scheduler.QuotaState;
import io.slipstream.api.spec.WithinQuota;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import tools.jackson.databind.JsonNode;

/** Quotas for a simulation: read from the server's own Quota documents, or derived from the trace. */
public final class QuotaFiles {
    /** The root of derived quotas: every tenant's quota sits under it, so they lend to each other. */
    public static final QuotaId SHARED_ROOT = new QuotaId("shared", "gpus");

    private QuotaFiles() {
    }

    /** Reads the Quota documents of a YAML file as {@code slipstream apply} would (other kinds are skipped). */
    public static List<QuotaState> read(Path file, String field) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new InvalidInputException(field, "no such file: " + file);
        } catch (IOException e) {
            throw new InvalidInputException(field, "could not read " + file + ": " + e.getMessage());
        }
        List<JsonNode> trees = DocumentParser.parse(bytes);
        Problems problems = new Problems();
        List<QuotaState> quotas = new ArrayList<>();
        for (int i = 0; i < trees.size(); i++) {
            Document<?> document = SpecReader.read(trees.get(i), SpecReader.Mode.USER, file.getFileName() + " documents[" + i + "].", problems);
            if (document != null && document.kind() == Kind.Quota) {
                quotas.add(QuotaState.of(document.workspace(), document.name(), (QuotaSpec) document.spec()));
            }
        }
        problems.throwIfAny("the quotas in " + file + " are not valid");
        Set<QuotaId> ids = new TreeSet<>();
        quotas.forEach(q -> ids.add(q.id()));
        for (QuotaState quota : quotas) {
            if (quota.parent() != null && !ids.contains(quota.parent())) {
                problems.add(file.getFileName() + " quota " + quota.id() + " spec.parent", "quota '" + quota.parent() + "' is not in the file");
            }
        }
        problems.throwIfAny("the quotas in " + file + " are not valid");
        if (quotas.isEmpty()) {
            throw new InvalidInputException(field, file + " holds no Quota document");
        }
        return quotas;
    }

    /**
     * One quota per tenant under {@link #SHARED_ROOT}, its GPUs proportional to {@code weights} (largest remainder,
     * so they add up to the cluster's GPUs exactly). The jobs of a trace ask for GPUs only, so cpu and memory are not
     * guaranteed.
     */
    public static List<QuotaState> proportional(Map<String, Double> weights, long clusterGpus) {
        double total = weights.values().stream().mapToDouble(Double::doubleValue).sum();
        List<String> tenants = new ArrayList<>(weights.keySet());
        long[] gpus = new long[tenants.size()];
        double[] remainders = new double[tenants.size()];
        long given = 0;
        for (int i = 0; i < tenants.size(); i++) {
            double exact = total == 0 ? (double) clusterGpus / tenants.size() : clusterGpus * weights.get(tenants.get(i)) / total;
            gpus[i] = (long) Math.floor(exact);
            remainders[i] = exact - gpus[i];
            given += gpus[i];
        }
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < tenants.size(); i++) {
            order.add(i);
        }
        order.sort(Comparator.comparingDouble((Integer i) -> remainders[i]).reversed().thenComparing(tenants::get));
        for (int k = 0; given < clusterGpus && k < order.size(); k++, given++) {
            gpus[order.get(k)]++;
        }
        List<QuotaState> quotas = new ArrayList<>();
        quotas.add(new QuotaState(SHARED_ROOT, QuotaType.General, null, null, gpusOnly(clusterGpus), null, WithinQuota.Never));
        for (int i = 0; i < tenants.size(); i++) {
            quotas.add(new QuotaState(Policy.quotaOf(tenants.get(i)), QuotaType.General, null, SHARED_ROOT, gpusOnly(gpus[i]), null, WithinQuota.Never));
        }
        return quotas;
    }

    private static Resources gpusOnly(long gpus) {
        return new Resources(0, 0, (int) Math.min(Integer.MAX_VALUE, gpus), null);
    }
}
