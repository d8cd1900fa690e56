package io.slipstream.server.auth;

import static java.util.Objects.requireNonNull;

import java.util.Set;

/**
 * Who makes a request: a user, whether an admin, and the workspaces the user is a member of. A run's own token
 * ({@code run} set) acts for that run only: it may read the run and nothing else.
 */
public record Principal(String user, boolean admin, Set<String> workspaces, String run) {
    public Principal {
        requireNonNull(user, "user is null");
        workspaces = Set.copyOf(workspaces);
    }

    public Principal(String user, boolean admin, Set<String> workspaces) {
        this(user, admin, workspaces, null);
    }

    /** Whether this caller may see and change objects of {@code workspace}. */
    public boolean canAccess(String workspace) {
        return admin || workspaces.contains(workspace);
    }

    /** The workspaces this caller may see, {@code null} meaning all (admins). */
    public Set<String> visibleWorkspaces() {
        return admin ? null : workspaces;
    }
}
