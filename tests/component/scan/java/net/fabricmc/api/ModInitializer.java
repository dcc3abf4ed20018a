package net.fabricmc.api;

/** Stub of Fabric's entrypoint interface, enough to compile the samples. */
public interface ModInitializer {
    void onInitialize();
}
