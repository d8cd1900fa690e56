package io.slipstream.cli.command;

import io.slipstream.cli.CliException;
import io.slipstream.cli.ClientOptions;
import io.slipstream.server.SlipstreamServer;
import io.slipstream.server.StoreRestore;
import io.slipstream.store.StoreDamagedException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

@Command(name = "store", description = "Back up and restore the embedded store (PostgreSQL: pg_dump, see docs/operations.md).",
        subcommands = {StoreCommand.Backup.class, StoreCommand.Restore.class})
public final class StoreCommand {

    @Command(name = "backup", description = "Write a consistent copy of the running server's store to FILE (admins only; the server keeps serving).")
    public static final class Backup implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        ClientOptions client;

        @Parameters(index = "0", paramLabel = "FILE", description = "Where to write the backup (a zip); replaced whole, or not at all.")
        Path file;

        @Override
        public Integer call() {
            Path target = file.toAbsolutePath().normalize();
            if (target.getParent() == null || !Files.isDirectory(target.getParent())) {
                throw new CliException(CliException.REJECTED, "FILE: the directory " + target.getParent() + " does not exist");
            }
            if (Files.isDirectory(target)) {
                throw new CliException(CliException.REJECTED, "FILE: " + target + " is a directory");
            }
            long bytes = client.client().postForFile("/api/v1/store/backup", target);
            PrintWriter out = spec.commandLine().getOut();
            out.println("wrote a backup of the store to " + target + " (" + bytes + " bytes)");
            out.println("keep the key files secret.key and token.pepper of the data directory with it: the backup does not hold them");
            out.flush();
            return 0;
        }
    }

    @Command(name = "restore", description = "Restore a backup into a data directory, with no server running on it; "
            + "then start the server there.")
    public static final class Restore implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "FILE", description = "A backup written by 'slipstream store backup'.")
        Path file;

        @Option(names = "--data-dir", paramLabel = "DIR", required = true, description = "The data directory to restore into (made if missing).")
        Path dataDir;

        @Option(names = "--force", description = "Restore even where DIR has a store (it is set aside in DIR, never deleted) or another store's history.")
        boolean force;

        @Override
        public Integer call() {
            StoreRestore.Result result;
            try {
                result = StoreRestore.restore(file, dataDir, force, SlipstreamServer.systemClock());
            } catch (StoreRestore.Refused e) {
                throw new CliException(CliException.REJECTED, e.getMessage());
            } catch (IllegalArgumentException | StoreDamagedException e) {
                throw new CliException(CliException.REJECTED, e.getMessage());
            }
            PrintWriter out = spec.commandLine().getOut();
            out.println("restored the store " + result.identity() + " into " + result.store());
            if (result.setAside() != null) {
                out.println("  the store that was there is kept in " + result.setAside());
            }
            if (result.unknownRunsDir() != null) {
                out.println("  " + result.unknownRuns().size() + " run(s) that ran here are not in the backup (submitted after it): their"
                        + " directories are kept in " + result.unknownRunsDir() + "; processes of theirs that still run are no one's now:"
                        + " stop them (their pid files are there)");
            }
            if (!result.missingKeyFiles().isEmpty()) {
                out.println("  copy " + String.join(" and ", result.missingKeyFiles()) + " of the backed-up data directory into "
                        + dataDir.toAbsolutePath().normalize() + " before starting (and admin.token, if you use it): the store's secrets"
                        + " and tokens need them");
            }
            out.println("  start it with: " + io.slipstream.cli.Hints.command() + " server --data-dir " + dataDir);
            out.println("  runs that were running when the backup was taken are adopted if their instances are here, else marked lost"
                    + " and handled by their fault tolerance");
            out.flush();
            return 0;
        }
    }
}
