package dev.indexium.telemetry;

import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Properties;
import java.util.UUID;

/** config/indexium-telemetry.properties: written on first start, read before every ping. */
final class Config {
    static final String FILE = "indexium-telemetry.properties";
    static final String DEFAULT_ENDPOINT = "https://telemetry.indexium.dev";
    static final String PRIVACY = "https://github.com/indexium/indexium/blob/main/docs/telemetry.md#privacy";

    final boolean enabled;
    final UUID serverUuid;
    final String endpoint;

    private Config(boolean enabled, UUID serverUuid, String endpoint) {
        this.enabled = enabled;
        this.serverUuid = serverUuid;
        this.endpoint = endpoint;
    }

    static File file() {
        return new File(new File(System.getProperty("user.dir", "."), "config"), FILE);
    }

    /** The config, created with a fresh random server id when missing. Null when unreadable. */
    static Config loadOrCreate() throws IOException {
        File file = file();
        if (!file.exists()) {
            write(file);
        }
        Properties props = new Properties();
        InputStream in = new FileInputStream(file);
        try {
            props.load(in);
        } finally {
            in.close();
        }
        // Anything but an explicit "true" is off: a typo never turns telemetry on.
        boolean enabled = "true".equalsIgnoreCase(props.getProperty("enabled", "").trim());
        UUID uuid;
        try {
            uuid = UUID.fromString(props.getProperty("server-uuid", "").trim());
        } catch (IllegalArgumentException e) {
            return new Config(false, null, null);
        }
        String endpoint = props.getProperty("endpoint", DEFAULT_ENDPOINT).trim();
        while (endpoint.endsWith("/")) {
            endpoint = endpoint.substring(0, endpoint.length() - 1);
        }
        return new Config(enabled, uuid, endpoint);
    }

    private static void write(File file) throws IOException {
        File dir = file.getParentFile();
        if (!dir.isDirectory() && !dir.mkdirs()) {
            throw new IOException("cannot create " + dir);
        }
        String text = "# Indexium telemetry: counts how many servers run each mod indexed by Indexium.\n"
                + "#\n"
                + "# Every 30 minutes this server sends ONE request to the endpoint below with: this file's\n"
                + "# random server-uuid (hashed by the service with a salt destroyed every day, never stored),\n"
                + "# the id and version of every installed mod, the Minecraft version, the mod loader, the\n"
                + "# Java major version, the operating system and CPU architecture, the number of CPU cores,\n"
                + "# the number of players online and whether the server is in online mode.\n"
                + "# Nothing else: no address, no player names, no world data. The service keeps no IP address.\n"
                + "# Privacy: " + PRIVACY + "\n"
                + "#\n"
                + "# Set enabled=false to send nothing, ever (takes effect before the next ping, no restart needed).\n"
                + "enabled=true\n"
                + "server-uuid=" + UUID.randomUUID() + "\n"
                + "endpoint=" + DEFAULT_ENDPOINT + "\n";
        File tmp = new File(dir, FILE + ".tmp");
        OutputStream out = new FileOutputStream(tmp);
        try {
            out.write(text.getBytes("UTF-8"));
        } finally {
            out.close();
        }
        if (!tmp.renameTo(file)) {
            tmp.delete();
            if (!file.exists()) {
                throw new IOException("cannot write " + file);
            }
        }
    }
}
