package io.slipstream.simulator.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RecorderTest {
    @ParameterizedTest(name = "a window of {0} ms: buckets of {1} ms")
    @CsvSource({
            "0, 1000",                 // at least a second
            "1, 1000",
            "60000, 1000",             // a minute: 60 points
            "5400000, 30000",          // 90 minutes: 180
            "86400000, 300000",        // a day: 288
            "5184000000, 21600000",    // 60 days: 240
            "31536000000, 172800000",  // a year: 183
            "315360000000, 1209600000" // ten years: weeks, 261
    })
    void bucketsAreRoundAndScaleToTheWindow(long span, long bucket) {
        assertThat(Recorder.bucketMillis(span)).isEqualTo(bucket);
    }

    @Test
    void anyWindowOverFiveMinutesGetsOneHundredAndTwentyToThreeHundredBuckets() {
        for (long span = 300_001; span < 40L * 365 * 86_400_000; span = span * 21 / 20) {
            long bucket = Recorder.bucketMillis(span);
            long buckets = (span + bucket - 1) / bucket;
            assertThat(buckets).as("%d ms in buckets of %d", span, bucket).isBetween(120L, 300L);
        }
    }

    @Test
    void theLastBucketIsAveragedOverItsPartInTheWindow() {
        // One tenant holds 4 GPUs from 0 to 45 s of a 45 s window: buckets of 1 s, each averaging 4.
        Recorder recorder = new Recorder(new long[] {4}, new double[] {1}, 8, 0, 45_500);
        recorder.allocate(0, 4, true, 1);
        recorder.advance(45_500);
        double[] average = recorder.averageGpus()[0];
        assertThat(average).hasSize(46).containsOnly(4.0);
    }
}
