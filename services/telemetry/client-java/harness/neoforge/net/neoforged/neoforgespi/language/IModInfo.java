package net.neoforged.neoforgespi.language;

/** Test stub (the real getVersion returns an ArtifactVersion; the client only calls toString). */
public interface IModInfo {
    String getModId();

    Object getVersion();
}
