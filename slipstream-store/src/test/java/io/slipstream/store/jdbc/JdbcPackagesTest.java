package io.slipstream.store.jdbc;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** How the JDBC store is put together: the SQL apart from the transactions, and H2's hardening apart from both. */
class JdbcPackagesTest {
    private static JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("io.slipstream.store");
    }

    /** Each table's SQL is functions over a JDBI handle: what transaction it runs in is its caller's to say. */
    @Test
    void theRowsKnowNoTransactionsOrStore() {
        noClasses().that().haveSimpleNameEndingWith("Rows").or().haveSimpleName("LabelSql")
                .should().dependOnClassesThat().belongToAnyOf(JdbcStore.class, Transactions.class, Opening.class)
                .check(classes);
    }

    /** H2's hardening is given what opens a store; it never names the JDBC store, so the dependency goes one way. */
    @Test
    void h2sHardeningNeverNamesTheJdbcStore() {
        noClasses().that().resideInAPackage("io.slipstream.store.jdbc.h2..")
                .should().dependOnClassesThat().resideInAPackage("io.slipstream.store.jdbc")
                .check(classes);
    }
}
