package net.fabricmc.api;

/** Compile-time stub of Fabric's interface; never packaged (the loader provides the real one). */
public interface DedicatedServerModInitializer {
    void onInitializeServer();
}
