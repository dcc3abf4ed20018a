package dev.indexium.telemetry.harness;

import java.util.ArrayList;
import java.util.List;

/** The mod list every stub loader reports: harness.mods = "id@version,id,id@version". */
public final class KnownMods {
    public static List<String[]> list() {
        List<String[]> out = new ArrayList<String[]>();
        for (String item : System.getProperty("harness.mods", "").split(",")) {
            if (item.isEmpty()) {
                continue;
            }
            int at = item.indexOf('@');
            out.add(at < 0 ? new String[] {item, null} : new String[] {item.substring(0, at), item.substring(at + 1)});
        }
        return out;
    }

    /** What a loader's "current server" would answer about its players. */
    public static final class StubServer {
        public int getPlayerCount() {
            return Integer.parseInt(System.getProperty("harness.players", "0"));
        }
    }

    public static final StubServer SERVER = new StubServer();
}
