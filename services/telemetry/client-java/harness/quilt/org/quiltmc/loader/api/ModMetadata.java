package org.quiltmc.loader.api;

/** Test stub. */
public interface ModMetadata {
    String id();

    Version version();
}
