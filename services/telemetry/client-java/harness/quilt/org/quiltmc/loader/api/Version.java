package org.quiltmc.loader.api;

/** Test stub. */
public interface Version {
    String raw();
}
