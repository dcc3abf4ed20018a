package dev.indexium.telemetry;

/**
 * The one way in: every loader's entry point calls {@link #start} and returns at once.
 *
 * All work (reading the config, asking the loader for its mods, the network) happens on one
 * daemon thread, so the server thread is never blocked and a JVM exit never waits for us.
 * Nothing here throws: a failure is one debug line.
 */
public final class TelemetryClient {
    public static final String VERSION = "1.0.0";
    private static boolean started;

    private TelemetryClient() {
    }

    /** @param loader "fabric", "forge" or "neoforge": the entry point that ran (Quilt runs the Fabric one). */
    public static void start(final String loader) {
        try {
            synchronized (TelemetryClient.class) {
                if (started) {
                    return;
                }
                started = true;
            }
            Thread thread = new Thread(new Scheduler(loader), "indexium-telemetry");
            thread.setDaemon(true);
            thread.setPriority(Thread.MIN_PRIORITY);
            thread.start();
        } catch (Throwable t) {
            Log.debug("not started: " + t);
        }
    }
}
