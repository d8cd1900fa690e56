package io.slipstream.server;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Dependencies point inward: the core and the adapters never reach into the server. */
class ArchitectureTest {
    private static JavaClasses classes;

    /**
     * The main classes of every module, not their tests: under {@code mvn test} another module's test-jar is its
     * test-classes directory (which {@code DO_NOT_INCLUDE_TESTS} leaves out), under {@code mvn verify} its packaged
     * {@code -tests.jar} (which it does not).
     */
    @BeforeAll
    static void importClasses() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(location -> !location.contains("-tests.jar")).importPackages("io.slipstream");
    }

    @Test
    void theSchedulerDependsOnTheApiOnly() {
        noClasses().that().resideInAPackage("io.slipstream.scheduler..")
                .should().dependOnClassesThat().resideInAnyPackage("io.slipstream.server..", "io.slipstream.store..", "io.slipstream.executor..",
                        "java.io..", "java.nio..", "java.net..", "java.sql..")
                .check(classes);
    }

    @Test
    void theSchedulerNeverReadsTheClock() {
        noClasses().that().resideInAPackage("io.slipstream.scheduler..")
                .should().callMethod(java.time.Instant.class, "now")
                .orShould().callMethod(System.class, "currentTimeMillis")
                .orShould().callMethod(System.class, "nanoTime")
                .check(classes);
    }

    @Test
    void theModelIsPure() {
        noClasses().that().resideInAPackage("io.slipstream.model..")
                .should().dependOnClassesThat().resideInAnyPackage("io.slipstream.server..", "io.slipstream.store..", "io.slipstream.executor..",
                        "io.slipstream.scheduler..", "java.io..", "java.nio..", "java.net..", "java.sql..")
                .orShould().callMethod(java.time.Instant.class, "now")
                .orShould().callMethod(System.class, "currentTimeMillis")
                .orShould().callMethod(System.class, "nanoTime")
                .check(classes);
    }

    @Test
    void adaptersNeverReachIntoTheServer() {
        noClasses().that().resideInAnyPackage("io.slipstream.store..", "io.slipstream.executor..", "io.slipstream.api..")
                .should().dependOnClassesThat().resideInAnyPackage("io.slipstream.server..", "io.slipstream.cli..")
                .check(classes);
        noClasses().that().resideInAnyPackage("io.slipstream.store..")
                .should().dependOnClassesThat().resideInAnyPackage("io.slipstream.executor..", "io.slipstream.scheduler..")
                .check(classes);
        noClasses().that().resideInAnyPackage("io.slipstream.executor..")
                .should().dependOnClassesThat().resideInAnyPackage("io.slipstream.store..", "io.slipstream.scheduler..")
                .check(classes);
    }

    /**
     * Executors and stores are plug-ins, found by name ({@code Plugins}, {@link java.util.ServiceLoader}): the server
     * knows their SPIs only, so one can be added, or left out of a build, without touching it.
     */
    @Test
    void theServerKnowsNoExecutorOrStoreImplementation() {
        noClasses().that().resideInAPackage("io.slipstream.server..")
                .should().dependOnClassesThat().resideInAnyPackage("io.slipstream.executor.local..", "io.slipstream.executor.kubernetes..",
                        "io.slipstream.store.jdbc..", "io.slipstream.store.memory..")
                .because("the server finds executors and stores by name (ExecutorFactory, StoreFactory)")
                .check(classes);
    }

    /**
     * The store SPI ({@code io.slipstream.store}, the module slipstream-store-spi) is all the server compiles against of
     * the stores: records and interfaces, no database library (its POM's enforcer rule keeps them off its class path).
     */
    @Test
    void theStoreSpiNeedsNoDatabaseLibrary() {
        noClasses().that().resideInAPackage("io.slipstream.store")
                .should().dependOnClassesThat().resideInAnyPackage("org.jdbi..", "com.zaxxer..", "org.flywaydb..", "org.h2..",
                        "org.postgresql..", "java.sql..", "io.slipstream.store.jdbc..", "io.slipstream.store.memory..")
                .because("the server depends on slipstream-store-spi alone; database libraries come with the stores that implement it")
                .check(classes);
    }

    /**
     * The executor SPI ({@code io.slipstream.executor}, module slipstream-executor-spi) knows no executor, and each
     * executor knows the SPI and none of the others: the Kubernetes executor ships without the local one.
     */
    @Test
    void executorsDependOnTheSpiAndNotOnEachOther() {
        noClasses().that().resideInAPackage("io.slipstream.executor")
                .should().dependOnClassesThat().resideInAnyPackage("io.slipstream.executor.local..", "io.slipstream.executor.kubernetes..")
                .check(classes);
        noClasses().that().resideInAPackage("io.slipstream.executor.kubernetes..")
                .should().dependOnClassesThat().resideInAPackage("io.slipstream.executor.local..")
                .check(classes);
        noClasses().that().resideInAPackage("io.slipstream.executor.local..")
                .should().dependOnClassesThat().resideInAPackage("io.slipstream.executor.kubernetes..")
                .check(classes);
    }
}
