package org.quiltmc.loader.api;

import dev.indexium.telemetry.harness.KnownMods;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/** Test stub of Quilt's QuiltLoader: the harness's known mods. */
public final class QuiltLoader {
    public static Collection<ModContainer> getAllMods() {
        List<ModContainer> out = new ArrayList<ModContainer>();
        for (final String[] mod : KnownMods.list()) {
            out.add(new ModContainer() {
                @Override
                public ModMetadata metadata() {
                    return new ModMetadata() {
                        @Override
                        public String id() {
                            return mod[0];
                        }

                        @Override
                        public Version version() {
                            return new Version() {
                                @Override
                                public String raw() {
                                    return mod[1] == null ? "" : mod[1];
                                }
                            };
                        }
                    };
                }
            });
        }
        return out;
    }
}
