package dev.indexium.telemetry;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.util.zip.GZIPOutputStream;

/** One gzip JSON POST to {endpoint}/api/v1/analytics/submit; only the status and Retry-After matter. */
final class Sender {
    static final String PATH = "/api/v1/analytics/submit";
    static final int TIMEOUT_MS = 15000;

    static final class Result {
        final int status;
        final long retryAfterSeconds;

        Result(int status, long retryAfterSeconds) {
            this.status = status;
            this.retryAfterSeconds = retryAfterSeconds;
        }
    }

    private Sender() {
    }

    static Result send(String endpoint, String json) throws IOException {
        HttpURLConnection http = (HttpURLConnection) new URL(endpoint + PATH).openConnection();
        try {
            http.setConnectTimeout(TIMEOUT_MS);
            http.setReadTimeout(TIMEOUT_MS);
            http.setUseCaches(false);
            http.setInstanceFollowRedirects(false);
            http.setDoOutput(true);
            http.setRequestMethod("POST");
            http.setRequestProperty("Content-Type", "application/json");
            http.setRequestProperty("Content-Encoding", "gzip");
            http.setRequestProperty("User-Agent", "indexium-telemetry/" + TelemetryClient.VERSION);
            OutputStream out = new GZIPOutputStream(http.getOutputStream());
            try {
                out.write(json.getBytes("UTF-8"));
            } finally {
                out.close();
            }
            int status = http.getResponseCode();
            long retryAfter = parseRetryAfter(http.getHeaderField("Retry-After"));
            drain(status >= 400 ? http.getErrorStream() : http.getInputStream());
            return new Result(status, retryAfter);
        } finally {
            http.disconnect();
        }
    }

    /** Seconds; an HTTP date or garbage counts as a minute, so a confused answer is never hammered. */
    static long parseRetryAfter(String value) {
        if (value == null) {
            return 0;
        }
        try {
            return Math.max(1, Math.min(24 * 3600, Long.parseLong(value.trim())));
        } catch (NumberFormatException e) {
            return 60;
        }
    }

    private static void drain(InputStream in) throws IOException {
        if (in == null) {
            return;
        }
        try {
            byte[] buf = new byte[4096];
            int total = 0;
            int n;
            while ((n = in.read(buf)) > 0 && total < 65536) {
                total += n;
            }
        } finally {
            in.close();
        }
    }
}
