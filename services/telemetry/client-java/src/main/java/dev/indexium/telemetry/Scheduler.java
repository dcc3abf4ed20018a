package dev.indexium.telemetry;

import java.util.Random;

/** The daemon thread's loop: first ping after 3-6 minutes, then every 30 minutes, Retry-After honoured. */
final class Scheduler implements Runnable {
    static final long MINUTE = 60000L;
    static final long INTERVAL = 30 * MINUTE;
    static final long JITTER = 2 * MINUTE;
    /** Tests only: first delay and interval in milliseconds (no jitter). Never set on a real server. */
    static final String TEST_INTERVAL = "indexium.telemetry.test.intervalMillis";

    private final String loader;
    private final Random random = new Random();

    Scheduler(String loader) {
        this.loader = loader;
    }

    @Override
    public void run() {
        try {
            loop();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Throwable t) {
            Log.debug("stopped: " + t);
        }
    }

    private void loop() throws InterruptedException {
        String platform = Server.platform(loader);
        if (platform == null) {
            return; // a client, or a loader we cannot read: nothing to count
        }
        Config config;
        try {
            config = Config.loadOrCreate();
        } catch (Exception e) {
            Log.debug("config unreadable, not sending: " + e);
            return;
        }
        if (!config.enabled) {
            return;
        }
        long test = testInterval();
        Thread.sleep(test > 0 ? test : 3 * MINUTE + (long) (random.nextDouble() * 3 * MINUTE));
        while (true) {
            long wait = test > 0 ? test : INTERVAL - JITTER + (long) (random.nextDouble() * 2 * JITTER);
            try {
                config = Config.loadOrCreate();
                if (!config.enabled) {
                    return; // turned off while running: nothing more is sent
                }
                Sender.Result result = Sender.send(config.endpoint, Ping.build(platform, config.serverUuid));
                if ((result.status == 429 || result.status == 503) && result.retryAfterSeconds > 0) {
                    // The service says when; 503 adds jitter so a fleet does not return together.
                    wait = result.retryAfterSeconds * 1000L
                            + (result.status == 503 ? (long) (random.nextDouble() * MINUTE) : 0L);
                    Log.debug((result.status == 429 ? "rate limited" : "service unavailable")
                            + "; next ping in " + result.retryAfterSeconds + " s");
                } else if (result.status >= 300) {
                    Log.debug("ping answered " + result.status);
                }
            } catch (Exception e) {
                Log.debug("ping failed: " + e);
            }
            Thread.sleep(wait);
        }
    }

    private static long testInterval() {
        try {
            String value = System.getProperty(TEST_INTERVAL);
            return value == null ? 0 : Math.max(1, Long.parseLong(value.trim()));
        } catch (Exception e) {
            return 0;
        }
    }
}
