package io.slipstream.executor.local;

import io.slipstream.executor.local.process.SupervisorProgram;

/** The supervisor program the executor's suites run through. */
final class BuiltProgram {
    private BuiltProgram() {
    }

    /** The binary when the build made it, or the shell: {@code auto} would hide a binary that does not run. */
    static SupervisorProgram.Mode mode() {
        return SupervisorProgram.binaryInBuild() ? SupervisorProgram.Mode.binary : SupervisorProgram.Mode.shell;
    }
}
