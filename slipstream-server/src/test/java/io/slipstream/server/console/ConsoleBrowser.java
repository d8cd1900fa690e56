package io.slipstream.server.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.server.support.TestServer;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.logging.Level;
import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * A real headless Chromium on a test server's console (Debian's chromium and chromedriver; Selenium Manager never
 * runs, nothing is downloaded), one per test class, and what the console's tests do with it: sign in as a person
 * would, go to a page, wait for what it shows, take screenshots (target/console-screenshots). {@code -Dconsole.skip=true}
 * skips the tests where no Chromium is installed; elsewhere (CI) a missing one fails them.
 */
final class ConsoleBrowser implements AutoCloseable {
    static final Duration WAIT = Duration.ofSeconds(30);
    private static final String CHROMIUM = "/usr/bin/chromium";
    private static final String CHROMEDRIVER = "/usr/bin/chromedriver";
    private static final Path SCREENSHOTS = Path.of("target", "console-screenshots");

    private final TestServer server;
    private final ChromeDriver driver;

    private ConsoleBrowser(TestServer server, ChromeDriver driver) {
        this.server = server;
        this.driver = driver;
    }

    /** Skips the calling test class under {@code -Dconsole.skip=true}; fails it where Chromium is missing. First thing in its set-up. */
    static void requireChromium() throws IOException {
        Assumptions.assumeFalse(Boolean.getBoolean("console.skip"), "console.skip=true: the browser tests of the console are skipped");
        for (String tool : List.of(CHROMIUM, CHROMEDRIVER)) {
            if (!Files.isExecutable(Path.of(tool))) {
                throw new AssertionError(tool + " is missing: install Debian's chromium and chromium-driver (apt-get install chromium "
                        + "chromium-driver; .ci/run does), or skip these tests locally with -Dconsole.skip=true");
            }
        }
        Files.createDirectories(SCREENSHOTS);
    }

    /** A browser for {@code server}'s console, its own log kept to tell console errors. */
    static ConsoleBrowser open(TestServer server) {
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM);
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1366,768", "--disable-gpu");
        LoggingPreferences logs = new LoggingPreferences();
        logs.enable(LogType.BROWSER, Level.ALL);
        options.setCapability(ChromeOptions.LOGGING_PREFS, logs);
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(new File(CHROMEDRIVER)).usingAnyFreePort().build();
        return new ConsoleBrowser(server, new ChromeDriver(service, options));
    }

    ChromeDriver driver() {
        return driver;
    }

    Object script(String script, Object... arguments) {
        return ((JavascriptExecutor) driver).executeScript(script, arguments);
    }

    /** The browser's log errors since it was last read (read, so that the next test starts clean). */
    List<LogEntry> severeErrors() {
        return driver.manage().logs().get(LogType.BROWSER).getAll().stream().filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue()).toList();
    }

    /** Every test leaves the browser's log without errors. */
    void assertNoConsoleErrors() {
        assertThat(severeErrors().stream().map(LogEntry::toString).toList()).as("browser console errors").isEmpty();
    }

    /** Signs in as a person would: the sign-in form, the token pasted. */
    void signIn(String token, String hash) {
        signOut();
        driver.get(server.server().url() + "/" + hash);
        WebElement field = waitFor(By.id("token"));
        field.sendKeys(token);
        driver.findElement(By.id("sign-in-button")).click();
        waitFor(By.id("who"));
        new WebDriverWait(driver, WAIT).until(d -> !d.findElement(By.id("who")).getText().isEmpty());
    }

    /** Forgets the tab's token from a page of the origin that is not the console (so that no call of it goes out unsigned). */
    void signOut() {
        driver.get(server.server().url() + "/console/favicon.svg");
        script("sessionStorage.clear()");
    }

    void go(String hash) {
        driver.get(server.server().url() + "/" + hash);
    }

    WebElement waitFor(By by) {
        return new WebDriverWait(driver, WAIT).until(ExpectedConditions.presenceOfElementLocated(by));
    }

    /** Rows are replaced as the watch stream tells of changes: an element read a moment ago may be gone, so look again. */
    WebDriverWait waiting() {
        return (WebDriverWait) new WebDriverWait(driver, WAIT).ignoring(StaleElementReferenceException.class);
    }

    void waitForText(By by, String text) {
        waiting().until(d -> {
            List<WebElement> found = d.findElements(by);
            return !found.isEmpty() && found.get(0).getText().contains(text);
        });
    }

    void screenshot(String name) throws IOException {
        Files.write(SCREENSHOTS.resolve(name + ".png"), driver.getScreenshotAs(OutputType.BYTES));
    }

    @Override
    public void close() {
        driver.quit();
    }
}
