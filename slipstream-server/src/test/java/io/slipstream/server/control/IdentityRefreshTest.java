package io.slipstream.server.control;

import static io.slipstream.model.testing.Runs.aRun;
import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.WorkspaceSpec;
import io.slipstream.executor.IdentityToken;
import io.slipstream.executor.testing.FakeExecutor;
import io.slipstream.model.RunRecord;
import io.slipstream.model.testing.Runs;
import io.slipstream.server.identity.IdentityKeys;
import io.slipstream.server.identity.IdentityTokens;
import io.slipstream.server.secret.SecretCipher;
import io.slipstream.store.memory.InMemoryStore;
import io.slipstream.testing.TestingClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A run's identity tokens: signed at launch for each audience, the same for every instance of the attempt, signed again
 * once half their lifetime passed while the run runs, and no longer once it ended; a run whose tokens cannot be signed
 * fails at once, without spending restarts.
 */
class IdentityRefreshTest {
    private static final String ISSUER = "https://slipstream.example.com";
    private final TestingClock clock = new TestingClock();
    private InMemoryStore store;
    private FakeExecutor executor;

    @BeforeEach
    void setUp() {
        store = new InMemoryStore();
        store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of("team-a", null), new WorkspaceSpec(List.of())), clock.instant()));
        executor = new FakeExecutor(clock, 1, 8);
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    private ControlLoop loop(boolean signs) {
        IdentityKeys keys = new IdentityKeys(store, new SecretCipher(new byte[SecretCipher.KEY_BYTES]), clock, Duration.ofDays(7), Duration.ofDays(1));
        LoopParts parts = LoopParts.of(store, executor, clock);
        return new ControlLoop(signs ? parts.withIdentity(new RunIdentity(new IdentityTokens(keys, () -> ISSUER))) : parts);
    }

    private RunId submit(JobSpec spec) {
        RunRecord run = aRun("train").workspace("team-a").spec(spec).createdAt(clock.instant()).build();
        clock.advance(Duration.ofSeconds(1));
        return store.write(tx -> tx.createRun(run, Runs.created(run))).id();
    }

    private static JWTClaimsSet claims(IdentityToken token) throws Exception {
        return SignedJWT.parse(token.token().reveal()).getJWTClaimsSet();
    }

    @Test
    void tokensAreSignedAgainAtHalfTheirLifetimeWhileTheRunRunsAndNoLongerOnceItEnded() throws Exception {
        ControlLoop loop = loop(true);
        RunId id = submit(aJob("train").replicas(2).identity(Duration.ofMinutes(10), "vault", "https://minio.example.com/").spec());
        loop.cycle();
        assertThat(store.runs().get(id).orElseThrow().state()).isEqualTo(RunState.RUNNING);
        InstanceId first = new InstanceId(id, 1, 0);
        InstanceId second = new InstanceId(id, 1, 1);
        List<IdentityToken> launched = executor.identity(first);
        assertThat(launched).extracting(IdentityToken::audience).containsExactly("vault", "https://minio.example.com/");
        assertThat(launched).extracting(IdentityToken::file).containsExactly("token-0.jwt", "token-1.jwt");
        assertThat(executor.identity(second)).as("one set for the attempt").isEqualTo(launched);
        JWTClaimsSet vault = claims(launched.get(0));
        assertThat(vault.getAudience()).containsExactly("vault");
        assertThat(vault.getIssuer()).isEqualTo(ISSUER);
        assertThat(vault.getSubject()).isEqualTo("workspace/team-a/job/train/run/" + id.value());
        assertThat(vault.getClaim("attempt")).isEqualTo(1L);
        assertThat(Duration.between(vault.getIssueTime().toInstant(), vault.getExpirationTime().toInstant())).isEqualTo(Duration.ofMinutes(10));
        assertThat(claims(launched.get(1)).getAudience()).containsExactly("https://minio.example.com/");

        clock.advance(Duration.ofMinutes(4).plusSeconds(58));
        loop.cycle();
        assertThat(executor.identityRefreshes(first)).as("not yet half their lifetime").isZero();
        clock.advance(Duration.ofSeconds(2));
        Instant refreshedAt = clock.instant();
        loop.cycle();
        assertThat(executor.identityRefreshes(first)).isEqualTo(1);
        assertThat(executor.identityRefreshes(second)).isEqualTo(1);
        List<IdentityToken> refreshed = executor.identity(first);
        assertThat(refreshed).extracting(IdentityToken::audience).containsExactly("vault", "https://minio.example.com/");
        assertThat(claims(refreshed.get(0)).getIssueTime().toInstant()).isEqualTo(refreshedAt.truncatedTo(java.time.temporal.ChronoUnit.SECONDS));
        assertThat(claims(refreshed.get(0)).getJWTID()).isNotEqualTo(vault.getJWTID());
        loop.cycle();
        assertThat(executor.identityRefreshes(first)).as("due again only after another half-life").isEqualTo(1);

        executor.exit(first, 0);
        loop.cycle();
        clock.advance(Duration.ofMinutes(5));
        loop.cycle();
        assertThat(executor.identityRefreshes(first)).as("an ended instance is not refreshed").isEqualTo(1);
        assertThat(executor.identityRefreshes(second)).as("its running sibling is").isEqualTo(2);
        executor.exit(second, 0);
        loop.cycle();
        assertThat(store.runs().get(id).orElseThrow().state()).isEqualTo(RunState.SUCCEEDED);
        for (int i = 0; i < 3; i++) {
            clock.advance(Duration.ofMinutes(5));
            loop.cycle();
        }
        assertThat(executor.identityRefreshes(second)).as("the run ended: its tokens expire").isEqualTo(2);
    }

    /** A loop that takes over (a restart, another replica) does not know when the tokens it finds were signed. */
    @Test
    void aLoopThatTakesOverSignsRunningRunsTokensAgainAtOnce() {
        RunId id = submit(aJob("train").replicas(2).identity(Duration.ofHours(1), "vault").spec());
        loop(true).cycle();
        InstanceId first = new InstanceId(id, 1, 0);
        assertThat(executor.identityRefreshes(first)).isZero();
        ControlLoop successor = loop(true);
        successor.cycle();
        assertThat(executor.identityRefreshes(first)).isEqualTo(1);
        assertThat(executor.identityRefreshes(new InstanceId(id, 1, 1))).isEqualTo(1);
        successor.cycle();
        assertThat(executor.identityRefreshes(first)).as("then half a lifetime later").isEqualTo(1);
    }

    /** A launch of one more instance in its first cycle does not make a successor skip the tokens of those running. */
    @Test
    void aLaunchBesideRunningInstancesKeepsTheRunDue() throws Exception {
        RunRecord run = aRun("train").workspace("team-a").spec(aJob("train").identity(Duration.ofHours(1), "vault").spec()).createdAt(clock.instant()).build();
        IdentityKeys keys = new IdentityKeys(store, new SecretCipher(new byte[SecretCipher.KEY_BYTES]), clock, Duration.ofDays(7), Duration.ofDays(1));
        IdentityRefresh refresh = new IdentityRefresh(executor, new RunIdentity(new IdentityTokens(keys, () -> ISSUER)));
        InstanceId running = new InstanceId(run.id(), 1, 0);
        executor.launch(new io.slipstream.executor.LaunchSpec(running, "main-0", "node-1", List.of(), List.of("true"), java.util.Map.of(), null, null));
        executor.awaitReports();
        io.slipstream.model.InstanceRecord instance = io.slipstream.model.testing.Runs.anInstance(run).rank(0).build()
                .running(executor.find(running).orElseThrow(), clock.instant());
        refresh.signForLaunch(run, clock.instant(), false);
        refresh.refreshDue(List.of(run), java.util.Set.of(run.id()), java.util.Map.of(run.id(), List.of(instance)), clock.instant());
        assertThat(executor.identityRefreshes(running)).isEqualTo(1);
    }

    /** A store that cannot be read while tokens are signed pauses the loop; it is no reason to fail the run. */
    @Test
    void aStoreOutageWhileSigningPausesTheLoopAndFailsNoRun() {
        for (int calls = 0; calls < 80; calls++) {
            tearDown();
            setUp();
            ControlLoop loop = loop(true);
            RunId id = submit(aJob("train").replicas(2).identity(Duration.ofHours(1), "vault").spec());
            store.simulateOutageAfter(calls);
            boolean failed = false;
            try {
                loop.cycle();
            } catch (io.slipstream.store.StoreUnavailableException e) {
                failed = true;
            }
            store.simulateOutage(false);
            if (!failed) {
                break; // the cycle needed fewer calls: every earlier point was tried
            }
            loop.cycle();
            loop.cycle();
            RunRecord run = store.runs().get(id).orElseThrow();
            assertThat(run.state()).as("outage after %d calls: %s", calls, run.reason()).isEqualTo(RunState.RUNNING);
            assertThat(executor.identity(new InstanceId(id, 1, 0))).as("outage after %d calls", calls).hasSize(1);
        }
    }

    @Test
    void aRunWhoseTokensCannotBeSignedFailsWithoutSpendingRestarts() {
        ControlLoop loop = loop(false);
        RunId id = submit(aJob("train").replicas(2).identity(Duration.ofHours(1), "vault").spec());
        loop.cycle();
        loop.cycle();
        RunRecord run = store.runs().get(id).orElseThrow();
        assertThat(run.state()).isEqualTo(RunState.FAILED);
        assertThat(run.reason()).contains("IdentityUnavailable").contains("identity.issuer");
        assertThat(run.attempt()).isEqualTo(1);
        assertThat(executor.launched()).isEmpty();
        assertThat(store.runs().instancesOf(id)).extracting(i -> i.state()).containsOnly(InstanceState.FAILED);
    }
}
