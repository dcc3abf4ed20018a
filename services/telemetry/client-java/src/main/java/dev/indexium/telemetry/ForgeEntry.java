package dev.indexium.telemetry;

import net.minecraftforge.fml.common.Mod;

/** Forge constructs this class on clients too; the daemon thread checks the side before anything else. */
@Mod("indexium_telemetry")
public final class ForgeEntry {
    public ForgeEntry() {
        TelemetryClient.start("forge");
    }
}
