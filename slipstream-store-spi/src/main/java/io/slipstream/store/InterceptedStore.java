package io.slipstream.store;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.Function;

/**
 * A {@link Store} whose every call goes through an {@link Interceptor}, which makes it ({@code proceed}) or not: a
 * facet's read, a lease's call, a transaction and each call made on it. For what watches a store (the server's
 * metrics) and for tests that record, hold up or damage what the code under test sees. The facets are dynamic proxies,
 * so that a method added to one goes through the interceptor without a change here. It does not own the store
 * ({@link #close} closes it, as whoever opened it would).
 */
public final class InterceptedStore implements Store {
    private static final Set<Class<?>> FACETS = Set.of(RunReads.class, DocumentReads.class, CredentialReads.class, UsageReads.class);

    /** What a call goes through. */
    public interface Interceptor {
        /**
         * A call: {@code operation} is a facet's method as {@code facet.method} ({@code runs.get}, {@code leases.claim}),
         * a transaction's write by its name ({@code updateRun}), the store's own as {@code write}, {@code read},
         * {@code ping}; {@code proceed} makes it and returns its answer (or throws its failure).
         */
        Object call(String operation, Object[] args, Callable<Object> proceed) throws Exception;

        /**
         * The interceptor of a transaction about to begin: it intercepts the {@code write} (or {@code read}) that opens
         * it, then every call made in it. This one, unless a transaction needs one of its own.
         */
        default Interceptor transaction() {
            return this;
        }
    }

    private final Store target;
    private final Interceptor interceptor;
    private final RunReads runs;
    private final DocumentReads documents;
    private final CredentialReads credentials;
    private final UsageReads usage;
    private final Leases leases;

    public InterceptedStore(Store target, Interceptor interceptor) {
        this.target = target;
        this.interceptor = interceptor;
        this.runs = intercepted(RunReads.class, target.runs(), "runs.", interceptor);
        this.documents = intercepted(DocumentReads.class, target.documents(), "documents.", interceptor);
        this.credentials = intercepted(CredentialReads.class, target.credentials(), "credentials.", interceptor);
        this.usage = intercepted(UsageReads.class, target.usage(), "usage.", interceptor);
        this.leases = intercepted(Leases.class, target.leases(), "leases.", interceptor);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> T write(Function<StoreTx, T> work) {
        Interceptor open = interceptor.transaction();
        return (T) call(open, "write", new Object[] {work}, () -> target.write(tx -> work.apply(intercepted(StoreTx.class, tx, "", open))));
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> T read(Function<StoreReads, T> work) {
        Interceptor open = interceptor.transaction();
        return (T) call(open, "read", new Object[] {work}, () -> target.read(reads -> work.apply(intercepted(StoreReads.class, reads, "", open))));
    }

    @Override
    public RunReads runs() {
        return runs;
    }

    @Override
    public DocumentReads documents() {
        return documents;
    }

    @Override
    public CredentialReads credentials() {
        return credentials;
    }

    @Override
    public UsageReads usage() {
        return usage;
    }

    @Override
    public Leases leases() {
        return leases;
    }

    @Override
    public void ping() {
        call(interceptor, "ping", new Object[0], () -> {
            target.ping();
            return null;
        });
    }

    @Override
    public Deferral deferDurability() {
        return (Deferral) call(interceptor, "deferDurability", new Object[0], target::deferDurability);
    }

    @Override
    public void awaitDurable() {
        call(interceptor, "awaitDurable", new Object[0], () -> {
            target.awaitDurable();
            return null;
        });
    }

    @Override
    public void close() {
        target.close();
    }

    @Override
    public String toString() {
        return "intercepted " + target;
    }

    /** {@code facet}, each call through {@code interceptor} as {@code prefix} and its name; the facets it gives ({@code tx.runs()}) too. */
    @SuppressWarnings("unchecked")
    private static <F> F intercepted(Class<F> type, F facet, String prefix, Interceptor interceptor) {
        return (F) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> {
            if (method.getDeclaringClass() == Object.class) {
                return switch (method.getName()) {
                    case "equals" -> proxy == args[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    default -> "intercepted " + facet;
                };
            }
            if (FACETS.contains(method.getReturnType())) {
                return intercepted((Class<Object>) method.getReturnType(), invoke(method, facet, args), method.getName() + ".", interceptor);
            }
            return call(interceptor, prefix + method.getName(), args == null ? new Object[0] : args, () -> invoke(method, facet, args));
        });
    }

    private static Object call(Interceptor interceptor, String operation, Object[] args, Callable<Object> proceed) {
        try {
            return interceptor.call(operation, args, proceed);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("interceptor of " + operation + " failed", e);
        }
    }

    private static Object invoke(Method method, Object target, Object[] args) {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw new IllegalStateException(e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }
}
