package io.slipstream.cli;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The client is a client of the API: it reaches a server over HTTP and knows nothing of it (its POM's enforcer rule keeps
 * the server, stores, executors, scheduler and simulator off its class path; this holds its classes to what remains).
 * The server's own commands ({@code server}, {@code demo}, {@code store}, {@code example}, {@code simulate}) are
 * slipstream-cli's.
 */
class ClientArchitectureTest {
    @Test
    void theClientDependsOnTheApiPicocliJacksonAndTheJdkOnly() {
        JavaClasses client = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.slipstream.cli");
        assertThat(client.contain(ApiClient.class)).as("the client's classes are found").isTrue();
        classes().that().resideInAPackage("io.slipstream.cli..")
                .should().onlyDependOnClassesThat().resideInAnyPackage("io.slipstream.cli..", "io.slipstream.api..",
                        "picocli..", "tools.jackson..", "com.fasterxml.jackson.annotation..", "java..")
                .because("the client talks to a server over HTTP and ships without it")
                .check(client);
    }
}
