package io.slipstream.executor.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.slipstream.api.run.EndCause;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import java.util.List;
import org.junit.jupiter.api.Test;

class PodStatusTest {
    private static Pod pod(String phase, List<ContainerStatus> init, ContainerStatus main) {
        return new PodBuilder().withNewMetadata().withName("p").endMetadata()
                .withNewStatus().withPhase(phase).withInitContainerStatuses(init).withContainerStatuses(main == null ? List.of() : List.of(main))
                .endStatus().build();
    }

    private static ContainerStatusBuilder main() {
        return new ContainerStatusBuilder().withName("main").withImage("trainer:1");
    }

    @Test
    void anOutOfMemoryKillIsTheTypedCauseThatRestartRulesMatch() {
        var status = PodStatus.of(pod("Failed", List.of(), main().withStarted(true).withNewState().withNewTerminated().withExitCode(137)
                .withReason("OOMKilled").endTerminated().endState().build()));
        assertThat(status).as("worded by the control plane, as on the local executor")
                .isEqualTo(new PodStatus.Ended(137, EndCause.OOMKilled, null, false));
    }

    @Test
    void anOutOfMemoryKillBeforeTheStartupProbePassedIsNoProbeFailure() {
        var status = (PodStatus.Ended) PodStatus.of(pod("Failed", List.of(), main().withStarted(false).withNewState().withNewTerminated()
                .withExitCode(137).withReason("OOMKilled").endTerminated().endState().build()));
        TrackedInstance instance = new TrackedInstance(new InstanceId(new RunId("r-1"), 1, 0), "jobs", "ss-r-1-1-0", 0);
        instance.probe = true;
        assertThat(instance.endedOnFailedProbe(status)).isFalse();
        var killed = (PodStatus.Ended) PodStatus.of(pod("Failed", List.of(), main().withStarted(false).withNewState().withNewTerminated()
                .withExitCode(137).withReason("Error").endTerminated().endState().build()));
        assertThat(instance.endedOnFailedProbe(killed)).as("the kubelet's kill on a failing probe").isTrue();
    }

    @Test
    void aPlainExitIsItsCode() {
        var status = PodStatus.of(pod("Failed", List.of(), main().withStarted(true).withNewState().withNewTerminated().withExitCode(3)
                .withReason("Error").endTerminated().endState().build()));
        assertThat(status).isEqualTo(new PodStatus.Ended(3, null, null, false));
    }

    @Test
    void aContainerKilledBeforeItsStartupProbePassedNeverStarted() {
        var status = PodStatus.of(pod("Failed", List.of(), main().withStarted(false).withNewState().withNewTerminated().withExitCode(143)
                .endTerminated().endState().build()));
        assertThat(status).isEqualTo(new PodStatus.Ended(143, null, null, true));
    }

    @Test
    void anImageThatCannotBePulledIsAFailureOnceTheKubeletBacksOff() {
        var pulling = PodStatus.of(pod("Pending", List.of(), main().withNewState().withNewWaiting().withReason("ErrImagePull")
                .withMessage("not found").endWaiting().endState().build()));
        assertThat(pulling).as("one failed pull may be a blip").isInstanceOf(PodStatus.Starting.class);
        var backingOff = PodStatus.of(pod("Pending", List.of(), main().withNewState().withNewWaiting().withReason("ImagePullBackOff")
                .withMessage("Back-off pulling image \"trainer:1\"").endWaiting().endState().build()));
        assertThat(backingOff).isEqualTo(new PodStatus.CannotStart(127, "ImagePullFailed: ImagePullBackOff: Back-off pulling image \"trainer:1\""));
        var invalid = PodStatus.of(pod("Pending", List.of(), main().withNewState().withNewWaiting().withReason("InvalidImageName")
                .endWaiting().endState().build()));
        assertThat(invalid).isEqualTo(new PodStatus.CannotStart(127, "ImagePullFailed: InvalidImageName: (no message)"));
    }

    @Test
    void aBadContainerConfigOrInitImageIsAFailureToo() {
        var config = PodStatus.of(pod("Pending", List.of(), main().withNewState().withNewWaiting().withReason("CreateContainerConfigError")
                .withMessage("secret \"x\" not found").endWaiting().endState().build()));
        assertThat(config).isEqualTo(new PodStatus.CannotStart(126, "CreateContainerConfigError: secret \"x\" not found"));
        var init = PodStatus.of(pod("Pending", List.of(new ContainerStatusBuilder().withName("wait-for-metadata").withNewState().withNewWaiting()
                .withReason("ImagePullBackOff").withMessage("busybox gone").endWaiting().endState().build()), null));
        assertThat(init).isEqualTo(new PodStatus.CannotStart(127, "InitContainerFailed: wait-for-metadata: ImagePullBackOff: busybox gone"));
    }

    @Test
    void aPodTheKubeletRejectedOrEvictedHasNoExitCode() {
        Pod evicted = new PodBuilder().withNewMetadata().withName("p").endMetadata().withNewStatus().withPhase("Failed").withReason("Evicted")
                .withMessage("The node was low on resource: memory.").endStatus().build();
        assertThat(PodStatus.of(evicted)).isEqualTo(new PodStatus.Rejected("Evicted: The node was low on resource: memory."));
    }

    @Test
    void runningIsStartedOnceTheProbePasses() {
        assertThat(PodStatus.of(pod("Running", List.of(), main().withStarted(false).withNewState().withNewRunning().endRunning().endState().build())))
                .isEqualTo(new PodStatus.Running(false));
        assertThat(PodStatus.of(pod("Running", List.of(), main().withStarted(true).withNewState().withNewRunning().endRunning().endState().build())))
                .isEqualTo(new PodStatus.Running(true));
        assertThat(PodStatus.of(pod("Pending", List.of(), null))).isInstanceOf(PodStatus.Starting.class);
    }
}
