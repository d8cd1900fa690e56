package io.slipstream.executor.slurm;

import io.slipstream.executor.ExecutorException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The Unix accounts jobs run as ({@code slurm.users}, {@code slurm.defaultUser}), resolved once at start with
 * {@code id} (so through the server's NSS, as Slurm resolves them on the nodes). Each account's primary group is the
 * group its instances' directories and storage are shared with: it must be the account's own, or a run of another
 * workspace in that group could read them, so two accounts of different workspaces with one primary group are refused,
 * and so is root (uid or gid 0).
 */
final class SlurmAccounts {
    /** An account jobs run as: {@code sbatch --uid=<uid> --gid=<gid>}. */
    record Account(String name, int uid, int gid) {
    }

    private final Map<String, Account> byWorkspace;
    private final Account fallback;
    private final boolean refuseUnmapped;

    private SlurmAccounts(Map<String, Account> byWorkspace, Account fallback, boolean refuseUnmapped) {
        this.byWorkspace = Map.copyOf(byWorkspace);
        this.fallback = fallback;
        this.refuseUnmapped = refuseUnmapped;
    }

    /** Every job as the server's own account (no {@code users} and no {@code defaultUser}). */
    static SlurmAccounts serversOwn() {
        return new SlurmAccounts(Map.of(), null, false);
    }

    /**
     * The settings' accounts, each looked up with {@code lookup} (name to uid, gid and then the gids of every group it is
     * in, {@code null} if unknown).
     *
     * @throws ExecutorException naming the setting, if an account is unknown, root, or shares its primary group with another workspace's
     *                           (as its own, or as one of its other groups)
     */
    static SlurmAccounts resolve(SlurmSettings settings, Function<String, int[]> lookup) {
        if (settings.users().isEmpty() && settings.defaultUser() == null) {
            return serversOwn();
        }
        Map<String, int[]> looked = new HashMap<>();
        Function<String, int[]> once = name -> looked.computeIfAbsent(name, lookup);
        Map<String, Account> resolved = new HashMap<>();
        Map<String, Account> byWorkspace = new LinkedHashMap<>();
        for (Map.Entry<String, String> entry : new java.util.TreeMap<>(settings.users()).entrySet()) {
            byWorkspace.put(entry.getKey(), resolved.computeIfAbsent(entry.getValue(), name -> account("users." + entry.getKey(), name, once)));
        }
        Account fallback = settings.defaultUser() == null ? null
                : resolved.computeIfAbsent(settings.defaultUser(), name -> account("defaultUser", name, once));
        Map<Integer, String> groups = new HashMap<>();
        for (Account account : resolved.values()) {
            String other = groups.putIfAbsent(account.gid(), account.name());
            if (other != null) {
                throw new ExecutorException("slurm.users: accounts " + new TreeSet<>(List.of(other, account.name())) + " share the primary group "
                        + account.gid() + ": each workspace's account needs a group of its own, which its instances' files are shared with"
                        + " (useradd makes one by default)");
            }
        }
        // A member of another account's primary group (a supplementary group, which its jobs have too) reads what is shared with it.
        for (Account account : resolved.values()) {
            int[] ids = looked.get(account.name());
            for (int i = 2; ids != null && i < ids.length; i++) {
                String owner = groups.get(ids[i]);
                if (owner != null && !owner.equals(account.name())) {
                    throw new ExecutorException("slurm.users: account " + account.name() + " is in group " + ids[i] + ", the primary group of account "
                            + owner + ", which that account's instances' files and storage are shared with: take it out of the group");
                }
            }
        }
        return new SlurmAccounts(byWorkspace, fallback, !settings.trustedTenants());
    }

    private static Account account(String setting, String name, Function<String, int[]> lookup) {
        int[] ids = lookup.apply(name);
        if (ids == null) {
            throw new ExecutorException("slurm." + setting + ": no Unix user named " + name + " on the server (jobs run as it on the nodes,"
                    + " which must know it by the same uid)");
        }
        if (ids[0] == 0 || ids[1] == 0) {
            throw new ExecutorException("slurm." + setting + ": " + name + " is root (uid " + ids[0] + ", gid " + ids[1] + "): tenant code must"
                    + " not run as root");
        }
        return new Account(name, ids[0], ids[1]);
    }

    /**
     * The account the workspace's jobs run as; {@code null}: the server's own.
     *
     * @throws ExecutorException if the workspace has no account and the tenants are not trusted to share one
     */
    Account of(String workspace) {
        Account account = workspace == null ? null : byWorkspace.get(workspace);
        if (account != null) {
            return account;
        }
        if (refuseUnmapped) {
            throw new ExecutorException("workspace " + workspace + " has no Unix account to run its jobs as on Slurm (slurm.users): an admin"
                    + " gives it one; workspaces never share the server's");
        }
        return fallback;
    }

    /** The group of the workspace's account, which its storage is shared with; {@code null}: the server's account, or none. */
    Integer groupOf(String workspace) {
        Account account = byWorkspace.getOrDefault(workspace, fallback);
        return account == null ? null : account.gid();
    }

    /** Whether jobs run as accounts other than the server's. */
    boolean others() {
        return !byWorkspace.isEmpty() || fallback != null;
    }

    /** The names of the accounts jobs may run as ({@code squeue --user}), the server's own among them. */
    Collection<String> names(String serversOwn) {
        TreeSet<String> names = new TreeSet<>();
        byWorkspace.values().forEach(account -> names.add(account.name()));
        if (fallback != null) {
            names.add(fallback.name());
        }
        if (fallback == null && !refuseUnmapped) {
            names.add(serversOwn);
        }
        return names;
    }

    /**
     * Looks an account up with {@code id -u}, {@code id -g} and {@code id -G} (argument lists, a timeout each): its uid,
     * its gid, then every group it is in; {@code null} if it is unknown.
     */
    static int[] lookUp(String name, Duration timeout) {
        String uid = id("-u", name, timeout);
        String gid = uid == null ? null : id("-g", name, timeout);
        String all = gid == null ? null : id("-G", name, timeout);
        if (uid == null || !uid.matches("\\d{1,9}") || gid == null || !gid.matches("\\d{1,9}") || all == null || !all.matches("\\d{1,9}( \\d{1,9})*")) {
            return null;
        }
        List<Integer> ids = new ArrayList<>(List.of(Integer.valueOf(uid), Integer.valueOf(gid)));
        for (String group : all.split(" ")) {
            ids.add(Integer.valueOf(group));
        }
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    /** What {@code id <option> -- name} printed, or {@code null} if it failed. */
    private static String id(String option, String name, Duration timeout) {
        List<String> command = new ArrayList<>(List.of("id", option, "--", name));
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            process.getOutputStream().close();
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new ExecutorException("cannot look up the Unix user " + name + ": id took longer than " + timeout.toSeconds() + " s");
            }
            String out = new String(process.getInputStream().readNBytes(64 * 1024), StandardCharsets.US_ASCII).trim();
            return process.exitValue() == 0 ? out : null;
        } catch (IOException e) {
            throw new ExecutorException("cannot look up the Unix user " + name + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ExecutorException("interrupted while looking up the Unix user " + name, e);
        }
    }
}
