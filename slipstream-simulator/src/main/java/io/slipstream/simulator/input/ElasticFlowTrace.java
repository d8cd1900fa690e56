package io.slipstream.simulator.input;

import io.slipstream.api.problem.InvalidInputException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * The ElasticFlow raw traces (Microsoft ITP clusters): a folder of {@code clusterNN.csv} files with columns
 * {@code job_id, submission_time, duration, num_gpu}. Each file is one tenant named after it ({@code cluster01});
 * a job of more than {@code gpusPerInstance} GPUs becomes ceil(num_gpu / gpusPerInstance) instances of
 * {@code gpusPerInstance} GPUs (whole nodes), a smaller one a single instance.
 */
public final class ElasticFlowTrace {
    private ElasticFlowTrace() {
    }

    public static Trace read(Path folder, int gpusPerInstance, String field) {
        if (!Files.isDirectory(folder)) {
            throw new InvalidInputException(field, "no such folder: " + folder);
        }
        List<Path> files;
        try (Stream<Path> list = Files.list(folder)) {
            files = list.filter(p -> p.getFileName().toString().matches("cluster\\d+\\.csv")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("could not list " + folder, e);
        }
        if (files.isEmpty()) {
            throw new InvalidInputException(field, folder + " holds no clusterNN.csv file");
        }
        List<TraceJob> jobs = new ArrayList<>();
        for (Path file : files) {
            String tenant = file.getFileName().toString().replace(".csv", "").toLowerCase(Locale.ROOT);
            readCluster(file, tenant, gpusPerInstance, jobs, field);
        }
        return new Trace(folder.toString(), jobs);
    }

    private static void readCluster(Path file, String tenant, int gpusPerInstance, List<TraceJob> jobs, String field) {
        try (BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String header = reader.readLine();
            if (header == null || !header.trim().equals("job_id,submission_time,duration,num_gpu")) {
                throw new InvalidInputException(field, file + " line 1: expected the header job_id,submission_time,duration,num_gpu");
            }
            String line;
            int number = 1;
            while ((line = reader.readLine()) != null) {
                number++;
                if (line.isBlank()) {
                    continue;
                }
                String[] cells = line.split(",", -1);
                if (cells.length != 4) {
                    throw new InvalidInputException(field, file.getFileName() + ":" + number + " has " + cells.length + " cells, expected 4");
                }
                try {
                    long submit = Long.parseLong(cells[1].trim());
                    long duration = Long.parseLong(cells[2].trim());
                    int gpus = Integer.parseInt(cells[3].trim());
                    if (submit < 0 || duration < 0 || gpus < 1) {
                        throw new NumberFormatException("negative");
                    }
                    int instances = gpus > gpusPerInstance ? (gpus + gpusPerInstance - 1) / gpusPerInstance : 1;
                    int perInstance = gpus > gpusPerInstance ? gpusPerInstance : gpus;
                    jobs.add(new TraceJob(jobs.size(), submit * 1000, duration * 1000, tenant, perInstance, instances, 0, null));
                } catch (NumberFormatException e) {
                    throw new InvalidInputException(field, file.getFileName() + ":" + number + ": submission_time, duration and num_gpu must be whole numbers "
                            + "(num_gpu at least 1): '" + line + "'");
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not read " + file, e);
        }
    }
}
