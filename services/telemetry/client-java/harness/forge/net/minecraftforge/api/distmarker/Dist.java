package net.minecraftforge.api.distmarker;

/** Test stub. */
public enum Dist {
    CLIENT, DEDICATED_SERVER
}
