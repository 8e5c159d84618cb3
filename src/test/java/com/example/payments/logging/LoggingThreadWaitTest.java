package com.example.payments.logging;

import java.lang.reflect.Constructor;
import java.util.concurrent.TimeUnit;

import com.lmax.disruptor.Sequence;
import com.lmax.disruptor.SequenceBarrier;
import com.lmax.disruptor.SleepingWaitStrategy;
import com.lmax.disruptor.WaitStrategy;
import org.apache.logging.log4j.core.async.AsyncWaitStrategyFactory;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;

/**
 * How Log4j's logging thread waits for lines, as Log4j builds it from the shipped {@code log4j2.component.properties}:
 * it polls, and a line published without waking it is still written.
 */
class LoggingThreadWaitTest {

    @Test
    void theLoggingThreadPollsInsteadOfBeingWokenForEachLine() throws Exception {
        assertThat(shippedWaitStrategy(), instanceOf(SleepingWaitStrategy.class));
    }

    @Test
    void aLinePublishedWithoutAWakeUpIsFoundAtTheNextPoll() throws Exception {
        WaitStrategy strategy = shippedWaitStrategy();
        Sequence published = new Sequence(-1);
        Thread logging = Thread.ofPlatform().start(() -> {
            try {
                TimeUnit.MILLISECONDS.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            published.set(0);   // and no signalAllWhenBlocking(): nothing wakes the waiting thread
        });

        long found = strategy.waitFor(0, published, published, new NeverHalted());

        logging.join();
        assertThat(found, is(0L));
    }

    // The factory Log4j's async loggers use when the configuration names none (package-private in Log4j 2.26): it
    // reads log4j2.asyncLoggerWaitStrategy and its parameters from the component properties.
    private static WaitStrategy shippedWaitStrategy() throws ReflectiveOperationException {
        String factory = "org.apache.logging.log4j.core.async.DefaultAsyncWaitStrategyFactory";
        Constructor<?> constructor = Class.forName(factory).getDeclaredConstructor(String.class);
        constructor.setAccessible(true);
        return ((AsyncWaitStrategyFactory) constructor.newInstance("AsyncLogger.WaitStrategy")).createWaitStrategy();
    }

    // The barrier of a ring buffer that is never halted: the wait only asks it for an alert.
    private static final class NeverHalted implements SequenceBarrier {
        @Override
        public long waitFor(long sequence) {
            throw new UnsupportedOperationException();
        }

        @Override
        public long getCursor() {
            return 0;
        }

        @Override
        public boolean isAlerted() {
            return false;
        }

        @Override
        public void alert() {
        }

        @Override
        public void clearAlert() {
        }

        @Override
        public void checkAlert() {
        }
    }
}
