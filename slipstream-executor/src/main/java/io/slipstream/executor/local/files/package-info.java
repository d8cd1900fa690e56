/**
 * The local executor's trust boundary: every read and write of a path a workload can reach is made here. The server
 * may be root; nothing a workload put in its directories is trusted. No other class of the executor opens a file under
 * an instance directory or an image's staging area ({@code TrustBoundaryTest} fails the build if one does; the few that
 * read files no workload can reach, {@code /proc} or the server's own, are named there with their reasons). The rules:
 * <ul>
 *   <li><b>No link is followed as root.</b> Files in a directory only the server can change (an instance's control
 *       directory, see {@link io.slipstream.executor.local.files.InstanceDirectory}) are opened with
 *       {@code NOFOLLOW_LINKS}. Files in a directory the workload writes ({@code report/}, a pull's staging area) are
 *       first pinned by a hard link into a directory of the server's ({@link io.slipstream.executor.local.files.PinnedFile}:
 *       link(2) follows nothing), and only the pinned inode is examined and read; this is the one pinning check. A
 *       workload's trees are removed with {@code rm --one-file-system}, which never follows a link
 *       ({@link io.slipstream.executor.local.files.Trash}), its secrets relative to open directories
 *       ({@link io.slipstream.executor.local.files.SecretFiles}).</li>
 *   <li><b>Only regular files.</b> A link, FIFO, socket or device is refused
 *       ({@link io.slipstream.executor.local.files.SafeFiles.RefusedFile}); a pinned file must also have no other name
 *       (a hard link to a file the workload does not own) and belong to the run's uid when it has one.</li>
 *   <li><b>Size-limited.</b> Every read names its limit (64 bytes for a pid, exit code or epoch, 64 KiB for progress,
 *       1 MiB for a probe) and reads one byte more to know; logs are read by offset and length, and held to a limit
 *       on disk ({@link io.slipstream.executor.local.files.LogLimit}); a pulled image is copied at the size it had
 *       when it was pinned.</li>
 *   <li><b>Never blocking.</b> Nothing is opened before it is known to be a regular file, so a FIFO or device cannot
 *       hold a thread; a workload's own file, on which it may hold a lease (fcntl F_SETLEASE: every other open waits
 *       for the kernel's lease-break-time, 45 s), is opened on a thread of its own and waited for half a second at
 *       most ({@link io.slipstream.executor.local.files.PinnedFile.Stalled}), and a leased progress file is not read
 *       again for that instance; the system's tools run with a deadline and write to a file of their own, never a pipe
 *       ({@link io.slipstream.executor.local.files.SystemCommand}).</li>
 *   <li><b>Written whole.</b> What the workload reads (its metadata, hostfiles, notice, environment) and the server's
 *       records are written to a temporary file made new, then renamed over the old one
 *       ({@link io.slipstream.executor.local.files.SafeFiles#writeControlFile}): a reader never sees half of one, and a
 *       link left where the temporary file goes is replaced, never followed.</li>
 * </ul>
 * What a process the executor starts is given as stdin, stdout or stderr, and the directory it starts in, come from here
 * too ({@link io.slipstream.executor.local.files.Redirects}): the JDK opens and enters them, as the server.
 */
package io.slipstream.executor.local.files;
