/**
 * The processes of instances: how they start, how they are followed and how they are stopped. The launch path has one
 * set of names:
 * <ul>
 *   <li>the <b>supervisor</b> ({@link io.slipstream.executor.local.process.Supervisor}): one per instance, running as
 *       the server with a fixed environment; it starts the command (in a PID namespace as the run's uid, or a session
 *       of its own), writes the {@code pid} file, waits, and writes {@code exit_code}. It outlives the server;</li>
 *   <li>the <b>supervisor program</b> ({@link io.slipstream.executor.local.process.SupervisorProgram},
 *       {@code instances.launcher}): what a supervisor runs, the launcher binary ({@code slipstream-launch}, built from
 *       {@code src/main/c}) or the shell chain; both take the same arguments and write the same files;</li>
 *   <li>the <b>launch helper</b> ({@link io.slipstream.executor.local.process.LaunchHelper}): the launcher binary run
 *       once per server with {@code --serve}, which forks each instance's supervisor and tells the server when it
 *       started the command and when it ended. With the shell chain the supervisors are the server's children.</li>
 * </ul>
 * Once started, an instance is known by pids, start times and boot ({@link io.slipstream.executor.local.process.ProcFs}),
 * its end heard from the helper or polled ({@link io.slipstream.executor.local.process.ExitPoller}), its processes
 * signalled as a PID namespace or a process tree ({@link io.slipstream.executor.local.process.InstanceProcesses}) by
 * the {@link io.slipstream.executor.local.process.Stopper}; a startup probe runs beside it
 * ({@link io.slipstream.executor.local.process.StartupProber}).
 */
package io.slipstream.executor.local.process;
