package net.fabricmc.loader.api;

/** Test stub. */
public interface Version {
    String getFriendlyString();
}
