package io.slipstream.executor.local;

import io.slipstream.api.run.InstanceId;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.IdentityToken;
import io.slipstream.executor.local.files.InstanceDirectory;
import io.slipstream.executor.local.uid.UidAllocator;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/** Replaces a running instance's identity tokens in its directory ({@link io.slipstream.executor.Executor#refreshIdentity}). */
final class InstanceIdentity {
    private InstanceIdentity() {
    }

    /**
     * Writes {@code tokens} where the instance reads them; {@code false} if it does not run (its directory is gone, or
     * it ended: its tokens are removed, or about to be).
     *
     * @param uids the runs' uids, or {@code null} where instances run as the server's user
     */
    static boolean refresh(InstanceHandles handles, UidAllocator uids, InstanceId id, Map<String, String> handle, List<IdentityToken> tokens) {
        if (!(handles.locate(id, handle) instanceof InstanceLocation.Found found)) {
            return false;
        }
        InstanceDirectory dir = new InstanceDirectory(found.dir());
        if (dir.exitCode() != null) {
            return false;
        }
        Integer uid = uids == null ? null : uids.uidOf(id.runId());
        if (uids != null && uid == null) {
            // Written without the run's group they would be the server's alone: the workload would lose its tokens.
            throw new ExecutorException("cannot refresh the identity tokens of " + id + ": its run has no uid on this machine");
        }
        try {
            return dir.refreshIdentity(tokens, uid);
        } catch (IOException e) {
            throw new ExecutorException("cannot refresh the identity tokens of " + id + ": " + e.getMessage(), e);
        }
    }
}
