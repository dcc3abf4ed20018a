package net.fabricmc.loader.api;

import dev.indexium.telemetry.harness.KnownMods;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/** Test stub of Fabric's FabricLoader: the harness's known mods. */
public interface FabricLoader {
    static FabricLoader getInstance() {
        return Impl.INSTANCE;
    }

    Collection<ModContainer> getAllMods();

    Object getGameInstance();

    final class Impl implements FabricLoader {
        static final Impl INSTANCE = new Impl();

        @Override
        public Collection<ModContainer> getAllMods() {
            List<ModContainer> out = new ArrayList<ModContainer>();
            for (final String[] mod : KnownMods.list()) {
                out.add(new ModContainer() {
                    @Override
                    public net.fabricmc.loader.api.metadata.ModMetadata getMetadata() {
                        return new net.fabricmc.loader.api.metadata.ModMetadata() {
                            @Override
                            public String getId() {
                                return mod[0];
                            }

                            @Override
                            public Version getVersion() {
                                return new Version() {
                                    @Override
                                    public String getFriendlyString() {
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

        @Override
        public Object getGameInstance() {
            return KnownMods.SERVER;
        }
    }
}
