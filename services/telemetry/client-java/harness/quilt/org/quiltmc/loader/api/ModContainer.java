package org.quiltmc.loader.api;

/** Test stub. */
public interface ModContainer {
    ModMetadata metadata();
}
