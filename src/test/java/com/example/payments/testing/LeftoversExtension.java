package com.example.payments.testing;

import java.util.List;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a top-level test class that leaves a fixture running ({@link Leftovers}) and stops the fixture, so the next
 * class starts on a clean machine whatever the order the classes run in. Registered for every test class through
 * {@code META-INF/services/org.junit.jupiter.api.extension.Extension} with extension auto-detection on
 * ({@code junit-platform.properties}).
 */
public final class LeftoversExtension implements BeforeAllCallback, AfterAllCallback {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(LeftoversExtension.class);

    @Override
    public void beforeAll(ExtensionContext context) {
        if (topLevel(context)) {
            context.getStore(NAMESPACE).put("mark", Leftovers.mark());
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (!topLevel(context)) {
            return;
        }
        Long mark = context.getStore(NAMESPACE).get("mark", Long.class);
        List<String> left = Leftovers.closeSince(mark == null ? 0 : mark);
        if (!left.isEmpty()) {
            throw new AssertionError(context.getRequiredTestClass().getSimpleName()
                                     + " left running (now stopped): " + String.join("; ", left));
        }
    }

    private static boolean topLevel(ExtensionContext context) {
        return context.getRequiredTestClass().getEnclosingClass() == null;
    }
}
