package net.neoforged.api.distmarker;

/** Test stub. */
public enum Dist {
    CLIENT, DEDICATED_SERVER
}
