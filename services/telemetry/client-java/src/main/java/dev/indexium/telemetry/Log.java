package dev.indexium.telemetry;

import java.util.logging.Level;
import java.util.logging.Logger;

/** Debug lines only (java.util.logging FINE: every loader routes it to its log, hidden by default). */
final class Log {
    static final Logger LOGGER = Logger.getLogger("indexium-telemetry");

    private Log() {
    }

    static void debug(String message) {
        try {
            LOGGER.log(Level.FINE, "[indexium-telemetry] " + message);
        } catch (Throwable ignored) {
            // a broken logging setup must not reach the server either
        }
    }
}
