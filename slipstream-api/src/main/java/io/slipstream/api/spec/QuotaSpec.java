package io.slipstream.api.spec;

import com.fasterxml.jackson.annotation.JsonInclude;
import tools.jackson.databind.annotation.JsonSerialize;
import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import tools.jackson.databind.annotation.JsonDeserialize;

/**
 * Guaranteed resources of a workspace. {@code min} is guaranteed; {@code max} (optional) caps everything the quota's
 * runs use at once, idle capacity included; {@code parent} (optional, {@code name} in the same workspace or
 * {@code workspace/name}) places it in a tree whose root is the sharing pool of General quotas. {@code overcommit}
 * lets an admin guarantee more than the cluster has; {@code withinQuota} says whether a run may preempt lower-priority
 * guaranteed runs of the same quota; {@code fairSharing} weighs its claim on its pool's idle capacity (default 1).
 */
public record QuotaSpec(QuotaType type, @JsonSerialize(using = SpecBinding.ResourcesWithoutModel.class) Resources min, Resources max,
                        String parent, @JsonInclude(JsonInclude.Include.NON_DEFAULT) boolean overcommit,
                        @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = WithinQuota.IsDefault.class) WithinQuota withinQuota,
                        @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = FairSharing.IsDefault.class) FairSharing fairSharing)
        implements Spec {
    /** A dimension of {@code max} that is not capped holds this (or {@link Long#MAX_VALUE} for cpu and memory). */
    public static final int UNCAPPED = Integer.MAX_VALUE;

    public QuotaSpec {
        requireNonNull(type, "type is null");
        requireNonNull(min, "min is null");
        withinQuota = withinQuota == null ? WithinQuota.Never : withinQuota;
        fairSharing = fairSharing == null ? FairSharing.DEFAULT : fairSharing;
    }

    /** The document form: absent dimensions of {@code max} are uncapped, {@code gpuModel} is the model of {@code min}. */
    @JsonCreator
    public static QuotaSpec of(@JsonProperty("type") QuotaType type, @JsonProperty("min") Resources min,
                               @JsonProperty("max") @JsonDeserialize(using = SpecBinding.ResourcesDeserializer.class) Resources max,
                               @JsonProperty("parent") String parent, @JsonProperty("overcommit") Boolean overcommit,
                               @JsonProperty("withinQuota") WithinQuota withinQuota, @JsonProperty("gpuModel") String gpuModel,
                               @JsonProperty("fairSharing") FairSharing fairSharing) {
        Resources guarantee = min == null ? Resources.NONE : min;
        String model = gpuModel != null ? gpuModel : guarantee.gpuModel();
        return new QuotaSpec(type == null ? QuotaType.General : type,
                new Resources(guarantee.milliCpu(), guarantee.memoryBytes(), guarantee.gpu(), model), max, parent,
                overcommit != null && overcommit, withinQuota, fairSharing);
    }

    public QuotaSpec(QuotaType type, Resources min, Resources max, String parent) {
        this(type, min, max, parent, false, WithinQuota.Never, FairSharing.DEFAULT);
    }

    public QuotaSpec(QuotaType type, Resources min, Resources max, String parent, boolean overcommit, WithinQuota withinQuota) {
        this(type, min, max, parent, overcommit, withinQuota, FairSharing.DEFAULT);
    }

    /** The GPU model of a Dedicated quota ({@code null} for General). */
    @JsonProperty("gpuModel")
    public String gpuModel() {
        return min.gpuModel();
    }

    @Override
    public Kind kind() {
        return Kind.Quota;
    }
}
