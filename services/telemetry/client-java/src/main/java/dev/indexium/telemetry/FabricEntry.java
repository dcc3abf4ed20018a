package dev.indexium.telemetry;

import net.fabricmc.api.DedicatedServerModInitializer;

/** Fabric's (and Quilt's) "server" entry point: it runs on dedicated servers only. */
public final class FabricEntry implements DedicatedServerModInitializer {
    @Override
    public void onInitializeServer() {
        TelemetryClient.start("fabric");
    }
}
