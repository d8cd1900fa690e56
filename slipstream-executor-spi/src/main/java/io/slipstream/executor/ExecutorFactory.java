package io.slipstream.executor;

import io.slipstream.api.spec.FieldReader;
import java.util.Set;

/**
 * Makes one kind of {@link Executor}, chosen by name in the server's config file ({@code executor: local}). Found with
 * {@link java.util.ServiceLoader}: an implementation lists itself in
 * {@code META-INF/services/io.slipstream.executor.ExecutorFactory} and has a public no-argument constructor. The
 * server knows no implementation: it reads its own fields of the config file, hands the executor's fields to
 * {@link #read}, and at start calls {@link #create} with what that returned.
 *
 * <p>A factory is stateless; {@link #read} must not start, open or probe anything it need not (it runs for every
 * config file, also to check one); {@link #create} does that.
 */
public interface ExecutorFactory {
    /** The value of {@code executor:} that selects this executor: lower case, e.g. {@code local}, {@code kubernetes}. */
    String name();

    /**
     * The fields of the config file that are this executor's: top-level names ({@code kubernetes}, a block of its own;
     * {@code nodes}) or names in the shared {@code instances:} block ({@code instances.logLimit}). The server reads
     * none of them, refuses a top-level one when another executor is chosen, and hands exactly these to {@link #read}.
     * They must not be the server's own fields (server, store, executor, runs, secrets, tokens, instances.gracePeriod,
     * instances.maxGracePeriod).
     */
    Set<String> configFields();

    /**
     * Reads and checks this executor's settings.
     *
     * @param config a view of the config file that holds only {@link #configFields()} (those present), at their paths:
     *               every problem goes to it with its field path ({@link FieldReader#pathOf}), so the user sees all of
     *               them at once with the server's; an absent field means its default (an empty view: the defaults)
     * @return the settings; not used when a problem was recorded (it may then be {@code null})
     */
    ExecutorSettings read(FieldReader config);

    /**
     * Creates the executor, ready to launch (it may connect, claim uids, adopt what a previous server left).
     *
     * @param settings what {@link #read} of this factory returned, or settings of this factory's type made in code
     * @param context  what the server provides
     * @throws RuntimeException when it cannot start; the message says why, for the operator
     */
    Executor create(ExecutorSettings settings, ExecutorContext context);

    /**
     * A data directory whose server has closed is about to be removed (a demo's): give up what this executor holds on
     * the machine for it beyond the directory itself (the local executor: its uid range's claim). Nothing by default.
     */
    default void forget(java.nio.file.Path dataDir) {
    }
}
