package dev.indexium.telemetry.harness;

import java.util.logging.ConsoleHandler;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Test harness: runs the client's real entry point the way a loader would, on a classpath
 * whose stub loader classes report a known mod list (system property harness.mods).
 *
 * Prints what the test checks: how long the entry point took, every debug line of the
 * client, any exception that escaped into a thread, whether the client's thread is a daemon.
 * main() then returns; the JVM exits only because that thread is a daemon.
 *
 * args: entry (fabric | forge | neoforge), milliseconds to let the server "run".
 */
public final class Harness {
    public static void main(String[] args) throws Exception {
        Logger log = Logger.getLogger("indexium-telemetry");
        log.setLevel(Level.FINE);
        log.setUseParentHandlers(false);
        log.addHandler(new Handler() {
            @Override
            public void publish(LogRecord record) {
                System.out.println("LOG " + System.currentTimeMillis() + " " + record.getLevel() + " "
                        + record.getMessage());
                System.out.flush();
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        });
        Thread.setDefaultUncaughtExceptionHandler(new Thread.UncaughtExceptionHandler() {
            @Override
            public void uncaughtException(Thread t, Throwable e) {
                System.out.println("UNCAUGHT " + t.getName() + " " + e);
                System.out.flush();
            }
        });
        String entry = args[0];
        long runMillis = Long.parseLong(args[1]);
        long start = System.nanoTime();
        try {
            if ("fabric".equals(entry)) {
                Class.forName("dev.indexium.telemetry.FabricEntry").getMethod("onInitializeServer")
                        .invoke(Class.forName("dev.indexium.telemetry.FabricEntry").newInstance());
            } else if ("forge".equals(entry)) {
                Class.forName("dev.indexium.telemetry.ForgeEntry").newInstance();
            } else {
                Class.forName("dev.indexium.telemetry.NeoForgeEntry").newInstance();
            }
        } catch (Throwable t) {
            System.out.println("UNCAUGHT main " + t);
        }
        System.out.println("ENTRY_RETURNED_MS " + (System.nanoTime() - start) / 1000000);
        Thread.sleep(runMillis);
        int telemetryThreads = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("indexium-telemetry")) {
                telemetryThreads++;
                System.out.println("THREAD " + t.getName() + " daemon=" + t.isDaemon());
            }
        }
        System.out.println("TELEMETRY_THREADS " + telemetryThreads);
        System.out.println("HARNESS_DONE");
        System.out.flush();
    }
}
