package net.fabricmc.loader.api;

/** Test stub. */
public interface ModContainer {
    net.fabricmc.loader.api.metadata.ModMetadata getMetadata();
}
