/**
 * A uid of its own for every run, when the server is root ({@link io.slipstream.executor.local.uid.Isolation}): the
 * range this server claims on the machine ({@link io.slipstream.executor.local.uid.UidRangeClaims}), the uid of each
 * run and the group of each workspace's storage ({@link io.slipstream.executor.local.uid.UidAllocator}), every process
 * of a run's uid killed when its last instance ended ({@link io.slipstream.executor.local.uid.UidSweep}), and what a
 * uid left in the machine's shared places removed before it is given again
 * ({@link io.slipstream.executor.local.uid.UidLeftovers}).
 */
package io.slipstream.executor.local.uid;
