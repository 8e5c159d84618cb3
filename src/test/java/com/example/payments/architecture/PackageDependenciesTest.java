package com.example.payments.architecture;

import com.example.payments.Main;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The production classes' package dependencies, checked with ArchUnit: the service's packages form no cycle (an
 * adapter such as {@code redis} or {@code database} imports the idempotency contract, never the other way round), and
 * no package imports the top-level one, which wires them all ({@code Main}, the settings, the backends).
 */
class PackageDependenciesTest {

    private static final String ROOT = Main.class.getPackageName();
    private static JavaClasses production;

    @BeforeAll
    static void importProductionClasses() {
        production = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages(ROOT);
    }

    @Test
    void thePackagesFormNoCycle() {
        slices().matching(ROOT + ".(*)..").should().beFreeOfCycles().check(production);
    }

    @Test
    void noPackageImportsTheTopLevelOneThatWiresThemAll() {
        noClasses().that().resideOutsideOfPackage(ROOT)
                .should().dependOnClassesThat().resideInAPackage(ROOT)
                .check(production);
    }
}
