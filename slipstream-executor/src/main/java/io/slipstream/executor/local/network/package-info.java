/**
 * The networks of instances: a loopback-only network namespace per run with {@code network: Private}
 * ({@link io.slipstream.executor.local.network.RunNetworks}), whose one way out is the API relay, and the loopback
 * ports of instances on the machine's own network ({@link io.slipstream.executor.local.network.LoopbackPorts}).
 */
package io.slipstream.executor.local.network;
