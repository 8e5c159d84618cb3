package com.example.payments.carddata;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.apache.logging.log4j.core.Layout;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.config.Node;
import org.apache.logging.log4j.core.config.plugins.Plugin;
import org.apache.logging.log4j.core.config.plugins.PluginElement;
import org.apache.logging.log4j.core.config.plugins.PluginFactory;
import org.apache.logging.log4j.core.layout.AbstractStringLayout;

/**
 * A Log4j 2 layout that masks card numbers in what another layout writes: the whole line, every field of a JSON line
 * and every line of an exception's stack trace (its messages, its causes' and suppressed exceptions'), whatever the
 * message, the MDC or the map of fields holds. Digits of a PAN become {@code *} except the last four
 * ({@link PanDetector#mask(String)}); a line without a PAN is written as the inner layout made it.
 *
 * <p>It also writes nothing for Helidon's wire loggers ({@code Http1LoggingConnectionListener}): at DEBUG and TRACE
 * they print request lines, headers and bodies byte for byte, CVCs included, and no pattern can recognise a CVC.
 * Whatever level a forker sets on them, none of their lines reaches the console.
 *
 * <p>Used in {@code log4j2.xml} around the JSON and the text layouts:
 * <pre>{@code <CardMaskingLayout><JsonTemplateLayout .../></CardMaskingLayout>}</pre>
 * Neither can recognise a CVC: the paths that could log request bytes are closed where they start
 * ({@code docs/card-data.md}). Thread-safe when the inner layout is (Log4j's are).
 */
@Plugin(name = "CardMaskingLayout", category = Node.CATEGORY, elementType = Layout.ELEMENT_TYPE, printObject = true)
public final class CardMaskingLayout extends AbstractStringLayout {

    private static final List<String> WIRE_LOGGERS = List.of(
            "io.helidon.webserver.http1.Http1LoggingConnectionListener",
            "io.helidon.http.http1.Http1LoggingConnectionListener");

    private final Layout<?> inner;

    private CardMaskingLayout(Layout<?> inner) {
        super(StandardCharsets.UTF_8);
        this.inner = inner;
    }

    /**
     * The layout around another.
     *
     * @param inner the layout whose output is masked; it must write text ({@code JsonTemplateLayout},
     *              {@code PatternLayout})
     * @return the masking layout
     * @throws IllegalArgumentException when no inner layout is given
     */
    @PluginFactory
    public static CardMaskingLayout create(@PluginElement("Layout") Layout<?> inner) {
        if (inner == null) {
            throw new IllegalArgumentException("CardMaskingLayout needs a layout inside it");
        }
        return new CardMaskingLayout(inner);
    }

    @Override
    public String toSerializable(LogEvent event) {
        String logger = event.getLoggerName();
        if (logger != null && logger.startsWith("io.helidon.") && wireLogger(logger)) {
            return "";
        }
        Object line = inner.toSerializable(event);
        return PanDetector.mask(line instanceof String text ? text : String.valueOf(line));
    }

    @Override
    public String getContentType() {
        return inner.getContentType();
    }

    private static boolean wireLogger(String logger) {
        for (String wire : WIRE_LOGGERS) {
            if (logger.startsWith(wire)) {
                return true;
            }
        }
        return false;
    }
}
