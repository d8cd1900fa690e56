package io.slipstream.server.control;

import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.Executor;
import io.slipstream.executor.IdentityToken;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the identity tokens of running runs valid: once half their lifetime has passed since they were signed, signs
 * them again and hands them to every running instance of the run's attempt ({@link Executor#refreshIdentity}). A run
 * that ended is no longer looked at, so its tokens are not refreshed and expire. A loop that takes over (after a
 * restart, or from another replica) does not know when the tokens it finds were signed, and signs them again at once.
 * Safe on the loop's and the launches' threads.
 */
final class IdentityRefresh {
    private static final Logger LOG = LoggerFactory.getLogger(IdentityRefresh.class);
    /** When a refresh that failed (the executor, the signing key) is tried again: well inside the shortest half-life (2.5 min). */
    static final Duration RETRY_AFTER = Duration.ofSeconds(30);

    private final Executor executor;
    private final RunIdentity identity;
    /** When each run's tokens are next due to be signed again. */
    private final Map<RunId, Instant> due = new ConcurrentHashMap<>();

    /** @param identity signs the tokens, or {@code null} (no run gets any: their launches fail) */
    IdentityRefresh(Executor executor, RunIdentity identity) {
        this.executor = executor;
        this.identity = identity;
    }

    /**
     * Signs the run's tokens for instances launched at {@code now}; empty when it asks for none. {@code firstOfAttempt}:
     * none of the attempt's instances runs yet, so the run's tokens are all these; otherwise instances launched earlier
     * (perhaps by another leader, with tokens this loop never saw) keep the run due when they are, or at once.
     */
    List<IdentityToken> signForLaunch(RunRecord run, Instant now, boolean firstOfAttempt) throws RunIdentity.Unavailable {
        if (run.spec().identity() == null) {
            return List.of();
        }
        if (identity == null) {
            throw new RunIdentity.Unavailable(RunIdentity.NO_ISSUER, null);
        }
        List<IdentityToken> tokens = identity.mint(run, now);
        Instant next = now.plus(RunIdentity.refreshAfter(run.spec().identity()));
        if (firstOfAttempt) {
            due.put(run.id(), next);
        } else {
            due.computeIfPresent(run.id(), (id, was) -> was.isBefore(next) ? was : next);
        }
        return tokens;
    }

    /**
     * Refreshes the tokens of the runs among {@code active} (whose ids are {@code activeIds}) whose tokens are due, for
     * their running instances; forgets the runs that are not active any more.
     */
    void refreshDue(List<RunRecord> active, Set<RunId> activeIds, Map<RunId, List<InstanceRecord>> instances, Instant now) {
        due.keySet().retainAll(activeIds);
        if (identity == null) {
            return;
        }
        for (RunRecord run : active) {
            if (run.spec().identity() == null || run.state().isFinal()) {
                continue;
            }
            Instant next = due.get(run.id());
            if (next != null && now.isBefore(next)) {
                continue;
            }
            List<InstanceRecord> running = instances.getOrDefault(run.id(), List.of()).stream()
                    .filter(i -> i.id().attempt() == run.attempt() && i.state() == InstanceState.RUNNING && !i.handle().isEmpty()).toList();
            if (!running.isEmpty()) {
                due.put(run.id(), refresh(run, running, now));
            }
        }
    }

    /**
     * Signs the run's tokens and hands them to its running instances; returns when they are next due: half their
     * lifetime on, or soon if an instance could not be given them (the first failure stops the round: an executor that
     * cannot be reached is not asked once per instance) or none took them (none runs any more, as its report will say).
     */
    private Instant refresh(RunRecord run, List<InstanceRecord> running, Instant now) {
        List<IdentityToken> tokens;
        try {
            tokens = identity.mint(run, now);
        } catch (RunIdentity.Unavailable e) {
            LOG.warn("run {}: {}; trying again in {}", run.id(), e.getMessage(), RETRY_AFTER);
            return now.plus(RETRY_AFTER);
        }
        boolean given = false;
        for (InstanceRecord instance : running) {
            try {
                given |= executor.refreshIdentity(instance.id(), instance.handle(), tokens);
            } catch (RuntimeException e) {
                LOG.warn("could not refresh the identity tokens of {}: {}; trying again in {}", instance.id(), e.getMessage(), RETRY_AFTER);
                return now.plus(RETRY_AFTER);
            }
        }
        return given ? now.plus(RunIdentity.refreshAfter(run.spec().identity())) : now.plus(RETRY_AFTER);
    }
}
