package io.slipstream.api.run;

import java.util.List;

/**
 * Where the other instances of a run reach an instance: its host name, fully qualified name, IP address and the
 * ports it was given (distinct from every other instance's on the same address).
 */
public record Endpoint(String hostname, String fqdn, String ip, List<Integer> ports) {
    public Endpoint {
        ports = List.copyOf(ports);
    }
}
