package io.slipstream.executor.slurm;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideOutsideOfPackages;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The Slurm executor reuses the local executor's instance files (their layout, environment, notice and acknowledgement
 * are what the SDKs read) and nothing else of it: neither its processes, uids, cgroups, images nor networks, which are
 * about this machine.
 */
class SlurmDependenciesTest {
    private static final JavaClasses SLURM = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.slipstream.executor.slurm");

    @Test
    void onlyTheLocalExecutorsFilesAndStorageAreUsed() {
        noClasses().that().resideInAPackage("io.slipstream.executor.slurm..")
                .should().dependOnClassesThat(resideInAPackage("io.slipstream.executor.local..")
                        .and(resideOutsideOfPackages("io.slipstream.executor.local.files..", "io.slipstream.executor.local.storage..")))
                .check(SLURM);
    }
}
