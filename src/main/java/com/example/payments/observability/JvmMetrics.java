package com.example.payments.observability;

import java.time.Duration;
import java.util.List;

import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmHeapPressureMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;

/**
 * The JVM and process series every JVM dashboard and memory alert expects, from Micrometer's own binders under
 * Micrometer's names, plus the build-info gauge {@code app_build_info{version,revision}} (always 1).
 *
 * <p>Series, as scraped from {@code GET /metrics} on the health listener, each with {@code scope="application"} like
 * the service's own:
 * {@code jvm_memory_used_bytes}, {@code jvm_memory_committed_bytes} and {@code jvm_memory_max_bytes} by
 * {@code area} and {@code id} (heap and non-heap pools), {@code jvm_gc_pause_seconds} (count, sum, max by
 * {@code action} and {@code cause}, after the first collection), {@code jvm_gc_overhead} (share of CPU time spent in
 * GC over the last 5 minutes, 0 to 1), {@code jvm_memory_usage_after_gc{area="heap",pool="long-lived"}} (share of the
 * old generation still used after the last collection, 0 to 1), {@code jvm_threads_live_threads} and the other thread
 * counts, {@code jvm_classes_loaded_classes}, {@code process_cpu_usage}, {@code system_cpu_count},
 * {@code process_uptime_seconds}, {@code process_start_time_seconds}, {@code process_files_open_files} and
 * {@code process_files_max_files}. They are Micrometer's binders bound to the Prometheus registry that Helidon's
 * registry writes {@code /metrics} from, so they are served with the application's own meters.
 *
 * <p>Closing it stops the GC listeners of {@code jvm_gc_*} and {@code jvm_memory_usage_after_gc} (the series keep
 * their last values).
 */
public final class JvmMetrics implements AutoCloseable {

    /** Name of the build-info gauge. */
    public static final String BUILD_INFO = "app_build_info";

    private static final String SCOPE_TAG = "scope";
    private static final String SCOPE = "application";

    private final JvmGcMetrics gc;
    private final JvmHeapPressureMetrics pressure;

    private JvmMetrics(JvmGcMetrics gc, JvmHeapPressureMetrics pressure) {
        this.gc = gc;
        this.pressure = pressure;
    }

    /**
     * Binds the JVM and process binders and the build-info gauge to the registry.
     *
     * @param meters the registry {@code /metrics} serves (Helidon's, backed by Micrometer)
     * @param build  the version and revision of this build
     * @return the bound metrics, to close at shutdown
     */
    public static JvmMetrics bind(MeterRegistry meters, BuildInfo build) {
        io.micrometer.core.instrument.MeterRegistry micrometer = direct(meters);
        // Helidon tags its own meters with scope="application" but not those bound to Micrometer directly: the same
        // label on every series lets a dashboard or an alert filter all of them with one selector.
        Tags scope = Tags.of(SCOPE_TAG, SCOPE);
        JvmGcMetrics gc = new JvmGcMetrics(scope);
        JvmHeapPressureMetrics pressure = new JvmHeapPressureMetrics(scope, Duration.ofMinutes(5),
                                                                     Duration.ofMinutes(1));
        List<MeterBinder> binders = List.of(new JvmMemoryMetrics(scope), gc, pressure, new JvmThreadMetrics(scope),
                                            new ClassLoaderMetrics(scope), new ProcessorMetrics(scope),
                                            new UptimeMetrics(scope), new FileDescriptorMetrics(scope));
        binders.forEach(binder -> binder.bindTo(micrometer));
        meters.getOrCreate(Gauge.builder(BUILD_INFO, () -> 1)
                                   .description("The build: version and revision (git commit) of the running jar")
                                   .tags(List.of(Tag.create("version", build.version()),
                                                 Tag.create("revision", build.revision()))));
        return new JvmMetrics(gc, pressure);
    }

    /*
     * A composite of its own over the registries of Helidon's (the Prometheus one), not Helidon's composite itself:
     * Helidon listens to meters added to its composite and takes its registry lock in that listener, while holding
     * Micrometer's; a thread creating a meter through Helidon takes them in the other order. JvmGcMetrics creates its
     * pause timers on the JVM's notification thread at each new GC cause, so bound to Helidon's composite it
     * deadlocked the first request that created a meter during a collection. Here no Helidon lock is ever taken: the
     * series are written by the same Prometheus registry, unknown to Helidon's meter list (JSON output, remove()).
     */
    private static io.micrometer.core.instrument.MeterRegistry direct(MeterRegistry meters) {
        io.micrometer.core.instrument.MeterRegistry helidon =
                meters.unwrap(io.micrometer.core.instrument.MeterRegistry.class);
        CompositeMeterRegistry direct = new CompositeMeterRegistry();
        if (helidon instanceof CompositeMeterRegistry composite) {
            composite.getRegistries().forEach(direct::add);
        } else {
            direct.add(helidon);
        }
        return direct;
    }

    @Override
    public void close() {
        gc.close();
        pressure.close();
    }
}
