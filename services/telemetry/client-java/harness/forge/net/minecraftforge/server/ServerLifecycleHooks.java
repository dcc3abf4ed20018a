package net.minecraftforge.server;

import dev.indexium.telemetry.harness.KnownMods;

/** Test stub. */
public final class ServerLifecycleHooks {
    public static Object getCurrentServer() {
        return KnownMods.SERVER;
    }
}
