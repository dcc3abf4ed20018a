package net.fabricmc.loader.api.metadata;

import net.fabricmc.loader.api.Version;

/** Test stub. */
public interface ModMetadata {
    String getId();

    Version getVersion();
}
