package io.slipstream.executor.local;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideOutsideOfPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaCall;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaConstructorCall;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The local executor's trust boundary is a package: every read and write of a path a workload can reach is in
 * {@code io.slipstream.executor.local.files} (its package-info states the rules), and no other class of the local
 * executor opens a file, so none can open one under an instance directory or an image's staging area. The few that
 * read or write files no workload can reach are named here, each with its reason.
 */
class TrustBoundaryTest {
    private static final String LOCAL = "io.slipstream.executor.local";
    private static final String FILES = LOCAL + ".files";

    /** Classes outside the files package that open files, and why those files are out of every workload's reach. */
    static final Map<String, String> ALLOWED = Map.of(
            LOCAL + ".process.ProcFs", "/proc: the kernel's account of processes, not files anyone could put there",
            LOCAL + ".MachineNode", "/proc/driver/nvidia: the driver's account of its GPUs, read once at start",
            LOCAL + ".cgroup.CgroupFiles", "/sys/fs/cgroup: the kernel's cgroup files, root's; no instance's cgroup is ever delegated to its uid",
            LOCAL + ".uid.SystemUsers", "/etc/passwd, /etc/subuid and /etc/subgid: root's",
            LOCAL + ".process.SupervisorProgram", "<instances>/.launcher: the server's alone (0700), where the launcher binary is copied out of the jar",
            LOCAL + ".image.ImageLayout", "the image layout's index and the unpacked images' config and markers: written by skopeo and umoci as"
                    + " the server, in directories no run can change (a pull's staging area is read through files.PinnedFile); what an"
                    + " image's maker chose (its config) is read through files.SafeFiles, bounded");

    /**
     * What opens a file: its content read or written, a link made to it, a process given it as stdin, stdout or stderr,
     * or started in it as its working directory (the JDK enters it as the server, following links).
     */
    private static final Set<String> FILES_METHODS = Set.of("newInputStream", "newOutputStream", "newByteChannel", "newBufferedReader",
            "newBufferedWriter", "readString", "readAllBytes", "readAllLines", "lines", "write", "writeString", "copy", "createLink",
            "createSymbolicLink", "createFile", "createTempFile");
    private static final Set<String> FILE_STREAMS = Set.of("java.io.FileInputStream", "java.io.FileOutputStream", "java.io.RandomAccessFile",
            "java.io.FileReader", "java.io.FileWriter", "java.util.zip.ZipFile", "java.util.jar.JarFile");
    /** Classes whose constructors open the file they are given (a File or Path; PrintWriter, PrintStream and Formatter also a name). */
    private static final Set<String> WRITERS_AND_SCANNERS = Set.of("java.io.PrintWriter", "java.io.PrintStream", "java.util.Formatter",
            "java.util.Scanner");

    static final DescribedPredicate<JavaCall<?>> OPENS_A_FILE = new DescribedPredicate<>("open a file (java.nio.file.Files " + new TreeSet<>(FILES_METHODS)
            + ", FileChannel.open, " + new TreeSet<>(FILE_STREAMS) + ", " + new TreeSet<>(WRITERS_AND_SCANNERS) + " on a file, a ProcessBuilder"
            + " redirect to or from a file, or its working directory)") {
        @Override
        public boolean test(JavaCall<?> call) {
            String owner = call.getTargetOwner().getName();
            String name = call.getName();
            return switch (owner) {
                case "java.nio.file.Files" -> FILES_METHODS.contains(name);
                case "java.nio.channels.FileChannel", "java.nio.channels.AsynchronousFileChannel" -> name.equals("open");
                case "java.lang.ProcessBuilder$Redirect" -> Set.of("to", "from", "appendTo").contains(name);
                case "java.lang.ProcessBuilder" -> (name.startsWith("redirect") || name.equals("directory")) && takes(call, "java.io.File");
                default -> call instanceof JavaConstructorCall && (FILE_STREAMS.contains(owner) || WRITERS_AND_SCANNERS.contains(owner)
                        && (takes(call, "java.io.File") || takes(call, "java.nio.file.Path")
                        || !owner.equals("java.util.Scanner") && firstParameterIs(call, "java.lang.String")));
            };
        }

        private static boolean takes(JavaCall<?> call, String type) {
            return call.getTarget().getRawParameterTypes().stream().anyMatch(parameter -> parameter.getName().equals(type));
        }

        private static boolean firstParameterIs(JavaCall<?> call, String type) {
            List<JavaClass> parameters = call.getTarget().getRawParameterTypes();
            return !parameters.isEmpty() && parameters.get(0).getName().equals(type);
        }
    };

    private static final DescribedPredicate<JavaClass> ALLOWED_TO_OPEN_FILES = new DescribedPredicate<>("named in TrustBoundaryTest.ALLOWED") {
        @Override
        public boolean test(JavaClass javaClass) {
            JavaClass top = javaClass;
            while (top.getEnclosingClass().isPresent()) {
                top = top.getEnclosingClass().get();
            }
            return ALLOWED.containsKey(top.getName());
        }
    };

    private static com.tngtech.archunit.core.domain.JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages(LOCAL);
    }

    /** The rule itself, for a test that shows it catches a class that breaks it. */
    static ArchRule onlyTheFilesPackageOpensFiles() {
        return noClasses().that().resideInAPackage(LOCAL + "..").and().resideOutsideOfPackage(FILES + "..").and(DescribedPredicate.not(ALLOWED_TO_OPEN_FILES))
                .should().callCodeUnitWhere(OPENS_A_FILE)
                .because("every read and write of a path a workload can reach goes through " + FILES + " (its package-info states the rules)");
    }

    @Test
    void onlyTheFilesPackageOpensFilesBesidesTheNamedOnes() {
        onlyTheFilesPackageOpensFiles().check(classes);
    }

    /** The rule is not vacuous: a class of the executor that reads a file, or hands one to a process, breaks it. */
    @Test
    void theRuleCatchesAClassThatOpensAFileOutsideTheFilesPackage() {
        for (Class<?> breaker : List.of(ReadsAFile.class, RedirectsToAFile.class, OpensAChannel.class, PrintsToAFile.class, StartsInADirectory.class)) {
            assertThatThrownBy(() -> onlyTheFilesPackageOpensFiles().check(new ClassFileImporter().importClasses(breaker)))
                    .as(breaker.getSimpleName()).isInstanceOf(AssertionError.class).hasMessageContaining(breaker.getSimpleName());
        }
        onlyTheFilesPackageOpensFiles().check(new ClassFileImporter().importClasses(LooksOnly.class));
    }

    /** Reads a workload's progress file as the executor did before the files package: following whatever link is there. */
    static final class ReadsAFile {
        static String progress(Path instance) throws IOException {
            return Files.readString(instance.resolve("report/progress.json"));
        }
    }

    static final class RedirectsToAFile {
        static ProcessBuilder supervisor(Path instance) {
            return new ProcessBuilder("true").redirectError(ProcessBuilder.Redirect.appendTo(instance.resolve("supervisor.log").toFile()));
        }
    }

    static final class OpensAChannel {
        static long size(Path archive) throws IOException {
            try (FileChannel channel = FileChannel.open(archive)) {
                return channel.size();
            }
        }
    }

    /** Writes a file through one of the JDK's other ways in (PrintWriter, PrintStream, Formatter, Scanner, ZipFile). */
    static final class PrintsToAFile {
        static void notice(Path instance) throws IOException {
            try (java.io.PrintWriter out = new java.io.PrintWriter(instance.resolve("preemption_notice.json").toFile())) {
                out.println("{}");
            }
        }
    }

    /** Starts a process in a directory of the workload's: the JDK enters it as the server, through whatever link is there. */
    static final class StartsInADirectory {
        static ProcessBuilder probe(Path instance) {
            return new ProcessBuilder("true").directory(instance.resolve("work").toFile());
        }
    }

    /** Looks at files without opening them, as the executor's other classes may. */
    static final class LooksOnly {
        static boolean there(Path instance) {
            return Files.isDirectory(instance, LinkOption.NOFOLLOW_LINKS) && Files.exists(instance.resolve("pid"), LinkOption.NOFOLLOW_LINKS);
        }
    }

    /** The boundary leans on nothing of the executor: it is read on its own. */
    @Test
    void theFilesPackageDependsOnNoOtherPartOfTheExecutor() {
        noClasses().that().resideInAPackage(FILES + "..")
                .should().dependOnClassesThat(resideInAPackage(LOCAL + "..").and(resideOutsideOfPackage(FILES + "..")))
                .check(classes);
    }

    /** The parts (files, process, uid, storage, network, image) serve the executor and never reach back into it, nor in a circle. */
    @Test
    void thePartsServeTheExecutorWithoutCycles() {
        noClasses().that().resideInAPackage(LOCAL + ".*..")
                .should().dependOnClassesThat().resideInAPackage(LOCAL)
                .check(classes);
        slices().matching(LOCAL + ".(*)..").should().beFreeOfCycles().check(classes);
    }
}
