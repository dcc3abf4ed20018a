package dev.indexium.telemetry;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;

/** The protocol v1 JSON (docs/telemetry.md): mods by their loader id, informational fields as the JVM says. */
final class Ping {
    static final int MAX_MODS = 1000;
    // What the service takes as a manifest id; anything else would cost the whole ping a 400.
    static final Pattern MANIFEST_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

    private Ping() {
    }

    static String build(String platform, UUID serverUuid) throws Exception {
        List<String[]> mods = Server.mods(platform);
        String game = null;
        StringBuilder list = new StringBuilder();
        Set<String> seen = new HashSet<String>();
        for (String[] mod : mods) {
            String id = mod[0];
            if ("minecraft".equals(id)) {
                game = mod[1];
            }
            if (id == null || !MANIFEST_ID.matcher(id).matches() || !seen.add(id) || seen.size() > MAX_MODS) {
                continue;
            }
            if (list.length() > 0) {
                list.append(',');
            }
            list.append("{\"manifest_id\":").append(quote(id));
            // "0.0NONE" is FML's stand-in for a mod that declares no version.
            if (mod[1] != null && mod[1].length() > 0 && !"0.0NONE".equals(mod[1])) {
                list.append(",\"version\":").append(quote(cut(mod[1], 256)));
            }
            list.append('}');
        }
        StringBuilder json = new StringBuilder(list.length() + 512);
        json.append("{\"protocol\":1,\"server_uuid\":").append(quote(serverUuid.toString()))
            .append(",\"mods\":[").append(list).append(']')
            .append(",\"game_version\":").append(quote(cut(game == null ? "unknown" : game, 64)))
            .append(",\"loader\":").append(quote(platform))
            .append(",\"java_version\":").append(quote(cut(System.getProperty("java.version", "unknown"), 64)))
            .append(",\"os\":").append(quote(cut(System.getProperty("os.name", "unknown"), 64)))
            .append(",\"arch\":").append(quote(cut(System.getProperty("os.arch", "unknown"), 64)))
            .append(",\"core_count\":").append(Math.max(1, Math.min(1024, Runtime.getRuntime().availableProcessors())));
        int players = Server.playerCount(platform);
        if (players >= 0) {
            json.append(",\"player_count\":").append(Math.min(100000, players));
        }
        Boolean online = Server.onlineMode();
        if (online != null) {
            json.append(",\"online_mode\":").append(online.booleanValue());
        }
        return json.append('}').toString();
    }

    private static String cut(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max);
    }

    static String quote(String s) {
        StringBuilder out = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }
}
