package io.slipstream.api.wire;

import java.util.List;

/** Who the caller's token belongs to and which workspaces it may see. */
public record WhoAmIView(String user, boolean admin, List<String> workspaces) {
}
