/**
 * Instances with an image: what a node group's {@code image} may name
 * ({@link io.slipstream.executor.local.image.ImageReference}), the images pulled as the run's uid and unpacked on this
 * machine ({@link io.slipstream.executor.local.image.ImageCache}, its own files in
 * {@link io.slipstream.executor.local.image.ImageLayout}), and the bubblewrap sandbox an instance runs in
 * ({@link io.slipstream.executor.local.image.Sandbox}). docs/containers.md.
 */
package io.slipstream.executor.local.image;
