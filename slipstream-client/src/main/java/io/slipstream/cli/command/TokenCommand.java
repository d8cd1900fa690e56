package io.slipstream.cli.command;

import io.slipstream.cli.ApiClient;
import io.slipstream.cli.ClientOptions;
import io.slipstream.cli.Output;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import tools.jackson.databind.JsonNode;

@Command(name = "token", description = "Manage API tokens (admins only).",
        subcommands = {TokenCommand.Create.class, TokenCommand.ListTokens.class, TokenCommand.Revoke.class})
public final class TokenCommand {

    @Command(name = "create", description = "Create a token for a user; prints the secret alone on its last line (it is shown only once).")
    public static final class Create implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        ClientOptions client;

        @Option(names = "--user", required = true, paramLabel = "USER", description = "Who the token is for (a member name used in workspaces).")
        String user;

        @Option(names = "--admin", description = "Give the token admin rights.")
        boolean admin;

        @Option(names = "--description", paramLabel = "TEXT", description = "What the token is for.")
        String description;

        @Option(names = "--expires-in-days", paramLabel = "DAYS", description = "Expire after this many days (default: never).")
        Integer expiresInDays;

        @Override
        public Integer call() {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("user", user);
            body.put("admin", admin);
            if (description != null) {
                body.put("description", description);
            }
            if (expiresInDays != null) {
                body.put("expiresInDays", expiresInDays);
            }
            JsonNode token = client.client().postJson("/api/v1/tokens", body);
            spec.commandLine().getErr().println("created token " + token.get("id").asString() + " for " + user
                    + (admin ? " (admin)" : "") + "; keep it now, it is not shown again:");
            spec.commandLine().getErr().flush();
            spec.commandLine().getOut().println(token.get("token").asString());
            spec.commandLine().getOut().flush();
            return 0;
        }
    }

    @Command(name = "list", description = "List tokens (never their secrets).")
    public static final class ListTokens implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        ClientOptions client;

        @Override
        public Integer call() {
            JsonNode tokens = client.client().get("/api/v1/tokens");
            List<List<String>> rows = new ArrayList<>();
            for (JsonNode token : tokens.get("items")) {
                rows.add(List.of(Output.text(token, "id"), Output.text(token, "user"), Output.text(token, "admin"),
                        Output.text(token, "createdAt"), Output.text(token, "expiresAt"), Output.text(token, "lastUsedAt"),
                        Output.text(token, "revokedAt"), Output.text(token, "description")));
            }
            Output.table(spec.commandLine().getOut(), List.of("ID", "USER", "ADMIN", "CREATED", "EXPIRES", "LAST USED", "REVOKED", "DESCRIPTION"),
                    rows);
            return 0;
        }
    }

    @Command(name = "revoke", description = "Revoke a token by its id.")
    public static final class Revoke implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        ClientOptions client;

        @Parameters(paramLabel = "ID", description = "The token's id (tok-...).")
        String id;

        @Override
        public Integer call() {
            ApiClient api = client.client();
            api.delete("/api/v1/tokens/" + Runs.encode(id));
            spec.commandLine().getOut().println("revoked " + id);
            return 0;
        }
    }
}
