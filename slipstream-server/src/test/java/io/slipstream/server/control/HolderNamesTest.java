package io.slipstream.server.control;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class HolderNamesTest {
    @Test
    void onlyAReplicaOfThisHostWhoseProcessEndedIsGone() throws Exception {
        Process ended = new ProcessBuilder("true").start();
        ended.waitFor();
        String host = HolderNames.host();
        assertThat(HolderNames.isGone(host + ":" + ended.pid() + ":abcdef")).as("its process ended").isTrue();
        assertThat(HolderNames.isGone(HolderNames.newName())).as("this process").isFalse();
        assertThat(HolderNames.isGone(host + ":" + ProcessHandle.current().parent().orElseThrow().pid() + ":abcdef")).as("a live process").isFalse();
        assertThat(HolderNames.isGone("another-host:" + ended.pid() + ":abcdef")).as("another machine's: unknown").isFalse();
        assertThat(HolderNames.isGone("a")).isFalse();
        assertThat(HolderNames.isGone(host + ":not-a-pid:abcdef")).isFalse();
        assertThat(HolderNames.newName()).startsWith(host + ":" + ProcessHandle.current().pid() + ":").isNotEqualTo(HolderNames.newName());
    }
}
