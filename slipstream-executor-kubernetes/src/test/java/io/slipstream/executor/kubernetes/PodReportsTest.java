package io.slipstream.executor.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.InstanceReport;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which pod's news are an instance's: never those of a launch that a restart in place replaced. */
class PodReportsTest {
    private static final InstanceId ID = new InstanceId(new RunId("ps-1"), 1, 2);

    @TempDir
    Path root;

    /** A pod of ours, ended with {@code exitCode}; no address, so that nothing but its report is at stake. */
    private static Pod ended(int restart, String uid, int exitCode) {
        PodBuilder pod = new PodBuilder().withNewMetadata().withName(Names.pod(ID, restart)).withNamespace(TestCluster.NAMESPACE).withUid(uid)
                .addToLabels(Names.RUN, Names.runKey(ID.runId())).addToLabels(Names.ATTEMPT, "1").addToLabels(Names.RANK, "2")
                .addToAnnotations(Names.RUN_ID_ANNOTATION, ID.runId().value()).endMetadata()
                .withNewSpec().withNodeName("gpu-node-1").addNewContainer().withName(Manifests.MAIN_CONTAINER).endContainer().endSpec()
                .withNewStatus().withPhase("Failed").addNewContainerStatus().withName(Manifests.MAIN_CONTAINER).withStarted(true)
                .withNewState().withNewTerminated().withExitCode(exitCode).withReason("Error").endTerminated().endState().endContainerStatus()
                .endStatus();
        if (restart > 0) {
            pod.editMetadata().addToLabels(Names.RESTART, Integer.toString(restart)).endMetadata();
        }
        return pod.build();
    }

    @Test
    void newsOfTheEndedPodThatComeWhileTheRestartsPodIsBeingMadeAreNotTheRestarts() {
        TrackedInstances instances = new TrackedInstances();
        List<InstanceReport> reports = new CopyOnWriteArrayList<>();
        instances.setListener(reports::add);
        PodLogs logs = new PodLogs(TestCluster.config(), new LogSpool((namespace, pod, since) -> "", root));
        PodReports podReports = new PodReports(instances, null, logs, null, Clock.systemUTC());
        // Restart 1 is remembered before its pod is created: no uid yet, as while the create is on its way.
        instances.remember(ID, TestCluster.NAMESPACE, Names.pod(ID, 1), 1);

        Pod before = ended(0, "uid-of-restart-0", 137);
        podReports.changed(before, false);
        podReports.changed(before, true);
        assertThat(reports).as("a late status, and the deletion, of the launch before").isEmpty();

        podReports.changed(ended(1, "uid-of-restart-1", 3), false);
        assertThat(reports).singleElement().isInstanceOfSatisfying(InstanceReport.Exited.class, e -> assertThat(e.exitCode()).isEqualTo(3));
    }

    @Test
    void anOlderLaunchNeverTakesThePlaceOfANewerOne() {
        TrackedInstances instances = new TrackedInstances();
        TrackedInstance restart = instances.remember(ID, TestCluster.NAMESPACE, Names.pod(ID, 1), 1);
        assertThat(instances.remember(ID, TestCluster.NAMESPACE, Names.pod(ID), 0)).isSameAs(restart);
        assertThat(instances.track(ID, ended(0, "uid-of-restart-0", 137))).containsEntry("pod", Names.pod(ID));
        assertThat(instances.get(ID)).isSameAs(restart);
        assertThat(restart.uid).as("the older pod's uid is not the restart's").isNull();
        assertThat(instances.remember(ID, TestCluster.NAMESPACE, Names.pod(ID, 2), 2)).isNotSameAs(restart);
    }
}
