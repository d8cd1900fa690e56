/**
 * The local executor ({@code executor: local}): {@link io.slipstream.executor.local.LocalProcessExecutor}, its factory
 * and settings, and what puts its parts together for one instance (its start, its watch, its environment, its handle).
 * The parts are packages of their own, each serving this one and none reaching back: {@code files} (the trust
 * boundary: every read and write of a path a workload can reach), {@code process}, {@code uid}, {@code storage},
 * {@code network} and {@code image}.
 */
package io.slipstream.executor.local;
