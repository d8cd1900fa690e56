/**
 * The runs' shared storage on this machine, by workspace, job and run, never followed through a link
 * ({@link io.slipstream.executor.local.storage.SharedStorage}).
 */
package io.slipstream.executor.local.storage;
