package com.example.payments.logging;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.io.Serializable;

import org.apache.logging.log4j.core.Appender;
import org.apache.logging.log4j.core.Core;
import org.apache.logging.log4j.core.Filter;
import org.apache.logging.log4j.core.Layout;
import org.apache.logging.log4j.core.appender.AbstractOutputStreamAppender;
import org.apache.logging.log4j.core.appender.OutputStreamManager;
import org.apache.logging.log4j.core.async.AsyncLoggerContextSelector;
import org.apache.logging.log4j.core.config.Property;
import org.apache.logging.log4j.core.config.plugins.Plugin;
import org.apache.logging.log4j.core.config.plugins.PluginAttribute;
import org.apache.logging.log4j.core.config.plugins.PluginElement;
import org.apache.logging.log4j.core.config.plugins.PluginFactory;
import org.apache.logging.log4j.core.util.CloseShieldOutputStream;

/**
 * A Log4j appender on the process's stdout that writes a batch of lines at a time: {@code <Stdout name="...">} with
 * a layout inside, in {@code log4j2.xml}.
 *
 * <p>Log4j's own {@code Console} appender flushes after every line whatever its {@code immediateFlush} says (its
 * constructor passes {@code true}), so each line cost a {@code write} system call of its own: one per request with
 * the access log. This one keeps Log4j's 8 KiB buffer of the same {@link OutputStreamManager} and flushes at the end
 * of each batch the async loggers hand it (an event's {@code endOfBatch}), so a burst of lines goes out in as few
 * writes as the buffer allows and the last line of a batch is never held back. When the async loggers are not
 * selected (a forker's change to {@code log4j2.component.properties}), no event ends a batch and it flushes after every
 * line, as the console appender does. The stream is {@link FileDescriptor#out}, never {@code System.out} (which is
 * itself a logger, {@link Logging#redirectConsole()}); stopping the appender flushes it and leaves the descriptor open.
 */
@Plugin(name = "Stdout", category = Core.CATEGORY_NAME, elementType = Appender.ELEMENT_TYPE, printObject = true)
public final class StdoutAppender extends AbstractOutputStreamAppender<OutputStreamManager> {

    private static final String MANAGER = "stdout (batched)";

    private StdoutAppender(String name, Layout<? extends Serializable> layout, Filter filter,
                           OutputStreamManager manager, boolean immediateFlush) {
        super(name, layout, filter, true, immediateFlush, Property.EMPTY_ARRAY, manager);
    }

    /**
     * The appender, from its element in {@code log4j2.xml}.
     *
     * @param name   the appender's name, for {@code AppenderRef}
     * @param layout the layout of each line
     * @param filter an optional filter
     * @return the appender
     * @throws IllegalArgumentException when the name or the layout is missing
     */
    @PluginFactory
    public static StdoutAppender create(@PluginAttribute("name") String name,
                                        @PluginElement("Layout") Layout<? extends Serializable> layout,
                                        @PluginElement("Filter") Filter filter) {
        if (name == null || layout == null) {
            throw new IllegalArgumentException("Stdout appender needs a name and a layout");
        }
        return onStream(name, layout, filter, MANAGER, new FileOutputStream(FileDescriptor.out),
                        !AsyncLoggerContextSelector.isSelected());
    }

    // The appender on a stream: a test's, or file descriptor 1 (shielded: stopping the manager never closes it).
    static StdoutAppender onStream(String name, Layout<? extends Serializable> layout, Filter filter, String manager,
                                   OutputStream stream, boolean immediateFlush) {
        OutputStreamManager shared = OutputStreamManager.getManager(
                manager, layout, (managerName, l) -> new Manager(new CloseShieldOutputStream(stream), managerName, l));
        return new StdoutAppender(name, layout, filter, shared, immediateFlush);
    }

    // Log4j's manager of an output stream: the buffer, the header and footer, the lock.
    private static final class Manager extends OutputStreamManager {

        private Manager(OutputStream stream, String name, Layout<?> layout) {
            super(stream, name, layout, true);
        }
    }
}
