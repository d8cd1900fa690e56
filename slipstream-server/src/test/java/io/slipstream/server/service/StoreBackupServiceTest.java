package io.slipstream.server.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.server.api.ApiException;
import io.slipstream.server.auth.Principal;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Who may back up the store, and what a store backed up with its own tools answers. */
class StoreBackupServiceTest {
    @ParameterizedTest(name = "{0} admin={1} run={2} on {3}: {4}")
    @CsvSource(nullValues = "-", value = {
            "root,  true,  -,      postgresql, 501 pg_dump --format=custom",
            "root,  true,  -,      other,      501 its own tools",
            "alice, false, -,      postgresql, 403 only admins",
            "root,  true,  run-1a, postgresql, 403 only admins", // a run's token is never an admin
    })
    void onlyAdminsAndOnlyTheEmbeddedStore(String user, boolean admin, String run, String store, String answer) {
        Principal caller = new Principal(user, admin, Set.of(), run);
        int status = Integer.parseInt(answer.substring(0, 3));
        assertThatThrownBy(() -> StoreBackupService.unsupported(store).check(caller)).isInstanceOf(ApiException.class)
                .satisfies(e -> assertThat(((ApiException) e).status()).isEqualTo(status))
                .hasMessageContaining(answer.substring(4));
    }
}
