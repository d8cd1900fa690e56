package io.slipstream.executor.slurm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.executor.ExecutorException;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** Which account a workspace's jobs run as, and which settings keep the executor from starting. */
class SlurmAccountsTest {
    private static final SlurmSettings SETTINGS = SlurmSettings.defaults(Path.of("/shared"));
    /** alice 1001:1001, bob 1002:1002, carol 1003 in bob's group, root, and nobody else. */
    private static final Function<String, int[]> USERS = name -> switch (name) {
        case "alice" -> new int[] {1001, 1001};
        case "bob" -> new int[] {1002, 1002};
        case "carol" -> new int[] {1003, 1002};
        case "root" -> new int[] {0, 0};
        case "wheel" -> new int[] {1004, 0};
        case "dave" -> new int[] {1005, 1005, 1005, 1002};
        case "erin" -> new int[] {1006, 1006, 1006, 27};
        default -> null;
    };

    @Test
    void eachWorkspaceRunsAsItsOwnAccountAndOneWithoutIsRefusedUnlessTenantsShareOne() {
        SlurmAccounts accounts = SlurmAccounts.resolve(SETTINGS.withUsers(Map.of("team-a", "alice", "team-b", "bob")), USERS);
        assertThat(accounts.of("team-a")).isEqualTo(new SlurmAccounts.Account("alice", 1001, 1001));
        assertThat(accounts.of("team-b").uid()).isEqualTo(1002);
        assertThat(accounts.groupOf("team-b")).isEqualTo(1002);
        assertThatThrownBy(() -> accounts.of("team-c")).isInstanceOf(ExecutorException.class)
                .hasMessageContaining("workspace team-c has no Unix account").hasMessageContaining("slurm.users");
        assertThatThrownBy(() -> accounts.of(null)).isInstanceOf(ExecutorException.class);
        assertThat(accounts.names("root")).as("squeue --user: no job runs as the server's account").containsExactly("alice", "bob");

        SlurmAccounts shared = SlurmAccounts.resolve(SETTINGS.withTrustedTenants(true).withUsers(Map.of("team-a", "alice"))
                .withDefaultUser("bob"), USERS);
        assertThat(shared.of("team-c").name()).isEqualTo("bob");
        assertThat(shared.names("root")).containsExactly("alice", "bob");

        SlurmAccounts serversOwn = SlurmAccounts.resolve(SETTINGS.withTrustedTenants(true).withUsers(Map.of("team-a", "alice")), USERS);
        assertThat(serversOwn.of("team-c")).as("the server's own account").isNull();
        assertThat(serversOwn.names("root")).containsExactly("alice", "root");
        assertThat(SlurmAccounts.resolve(SETTINGS, USERS).others()).isFalse();
    }

    @Test
    void anUnknownAccountRootOrAGroupSharedByTwoWorkspacesIsRefusedNamingTheSetting() {
        assertThatThrownBy(() -> SlurmAccounts.resolve(SETTINGS.withUsers(Map.of("team-a", "mallory")), USERS))
                .hasMessageStartingWith("slurm.users.team-a: no Unix user named mallory");
        assertThatThrownBy(() -> SlurmAccounts.resolve(SETTINGS.withUsers(Map.of("team-a", "root")), USERS))
                .hasMessageStartingWith("slurm.users.team-a: root is root");
        assertThatThrownBy(() -> SlurmAccounts.resolve(SETTINGS.withUsers(Map.of("team-a", "wheel")), USERS)).hasMessageContaining("gid 0");
        assertThatThrownBy(() -> SlurmAccounts.resolve(SETTINGS.withUsers(Map.of("team-a", "bob", "team-b", "carol")), USERS))
                .hasMessageContaining("[bob, carol] share the primary group 1002");
        assertThatThrownBy(() -> SlurmAccounts.resolve(SETTINGS.withTrustedTenants(true).withDefaultUser("nobody-here"), USERS))
                .hasMessageStartingWith("slurm.defaultUser: no Unix user");
        // One account for two workspaces is the admin's choice: they share it.
        assertThat(SlurmAccounts.resolve(SETTINGS.withUsers(Map.of("team-a", "alice", "team-b", "alice")), USERS).of("team-b").name())
                .isEqualTo("alice");
    }

    /** A supplementary group is its jobs' too: an account in another's primary group would read that one's instances and storage. */
    @Test
    void anAccountInAnotherAccountsPrimaryGroupIsRefused() {
        assertThatThrownBy(() -> SlurmAccounts.resolve(SETTINGS.withUsers(Map.of("team-a", "dave", "team-b", "bob")), USERS))
                .isInstanceOf(ExecutorException.class)
                .hasMessage("slurm.users: account dave is in group 1002, the primary group of account bob, which that account's instances' files"
                        + " and storage are shared with: take it out of the group");
        assertThat(SlurmAccounts.resolve(SETTINGS.withUsers(Map.of("team-a", "erin", "team-b", "bob")), USERS).of("team-a").name())
                .as("a group no account has as its own").isEqualTo("erin");
        int[] root = SlurmAccounts.lookUp("root", java.time.Duration.ofSeconds(10));
        assertThat(root).as("id -u, -g and -G of root").startsWith(0, 0).contains(0);
        assertThat(root.length).isGreaterThan(2);
    }

    @Test
    void accountsOfTheirOwnLiftTheTrustedTenantsGateButNeedRootAndNoSharedDefault() {
        SlurmSettings own = SETTINGS.withUsers(Map.of("team-a", "alice"));
        assertThat(own.startRefusal(true)).as("no job runs as root: no allowRootJobs").isNull();
        assertThat(own.startRefusal(false)).hasToString("slurm.users needs the server to run as root: jobs are submitted as other accounts"
                + " with sbatch --uid, which only root may use");
        assertThat(own.withDefaultUser("bob").startRefusal(true).field()).isEqualTo("defaultUser");
        assertThat(own.withDefaultUser("bob").withTrustedTenants(true).startRefusal(true)).isNull();
        assertThat(own.withTrustedTenants(true).startRefusal(true).field()).as("other workspaces run as root").isEqualTo("allowRootJobs");
        assertThat(SETTINGS.withTrustedTenants(true).withDefaultUser("bob").startRefusal(false).field()).isEqualTo("defaultUser");
        assertThatThrownBy(() -> SETTINGS.withUsers(Map.of("team-a", "--uid=0"))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theQueueIsReadForTheAccountsJobsRunAs() {
        assertThat(SlurmExecutor.queueArguments(SETTINGS, SlurmAccounts.serversOwn())).contains("--me");
        SlurmAccounts accounts = SlurmAccounts.resolve(SETTINGS.withUsers(Map.of("team-a", "alice", "team-b", "bob")), USERS);
        assertThat(SlurmExecutor.queueArguments(SETTINGS, accounts)).contains("--user=alice,bob").doesNotContain("--me");
    }

    /** A launch's job is looked for by its name among its own account's jobs alone: any account can name a job so. */
    @Test
    void aLaunchsJobIsLookedForAmongItsAccountsJobsAlone() {
        SlurmAccounts accounts = SlurmAccounts.resolve(SETTINGS.withTrustedTenants(true).withUsers(Map.of("team-a", "alice", "team-b", "bob")),
                USERS);
        io.slipstream.api.run.InstanceId id = new io.slipstream.api.run.InstanceId(new io.slipstream.api.run.RunId("run-b"), 1, 0);
        java.util.List<String> queue = SlurmExecutor.queueArguments(SETTINGS, accounts);
        assertThat(InstanceLaunch.ofTheLaunchsAccount(queue, SlurmHandles.launch(id, "node01", 1, 0, accounts.of("team-b"))))
                .contains("--user=1002").doesNotContain("--user=alice,bob", "--me");
        assertThat(InstanceLaunch.ofTheLaunchsAccount(queue, SlurmHandles.launch(id, "node01", 1, 0, null))).contains("--me")
                .noneMatch(argument -> argument.startsWith("--user="));
    }
}
