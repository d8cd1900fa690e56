package io.slipstream.store;

import io.slipstream.api.spec.Kind;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** Applied documents: workspaces, shapes, quotas, jobs (secrets are {@link CredentialReads}'). */
public interface DocumentReads {

    /** {@code workspace} is {@code null} for cluster-wide kinds; {@link UnreadableRecordException} if it cannot be read. */
    Optional<StoredDocument> get(Kind kind, String workspace, String name);

    /**
     * Documents of one kind, ordered by workspace then name, limited to {@code workspaces} ({@code null}: all).
     * For the Workspace kind the limit applies to the workspaces' own names.
     */
    List<StoredDocument> list(Kind kind, Set<String> workspaces);

    /** Names of the workspaces that list {@code user} as a member. */
    Set<String> workspacesOf(String user);
}
