package dev.indexium.telemetry;

import net.neoforged.fml.common.Mod;

/** NeoForge constructs this class on clients too; the daemon thread checks the side before anything else. */
@Mod("indexium_telemetry")
public final class NeoForgeEntry {
    public NeoForgeEntry() {
        TelemetryClient.start("neoforge");
    }
}
