package io.slipstream.api.spec;

/** How long shared storage lives and who shares it: one run, every run of one job, or the whole workspace. */
public enum StorageScope {
    run,
    job,
    workspace
}
