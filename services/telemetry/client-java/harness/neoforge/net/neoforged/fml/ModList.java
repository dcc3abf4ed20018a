package net.neoforged.fml;

import dev.indexium.telemetry.harness.KnownMods;
import java.util.ArrayList;
import java.util.List;
import net.neoforged.neoforgespi.language.IModInfo;

/** Test stub of the loader's ModList: the harness's known mods. */
public final class ModList {
    private static final ModList INSTANCE = new ModList();

    public static ModList get() {
        return INSTANCE;
    }

    public List<IModInfo> getMods() {
        List<IModInfo> out = new ArrayList<IModInfo>();
        for (final String[] mod : KnownMods.list()) {
            out.add(new IModInfo() {
                @Override
                public String getModId() {
                    return mod[0];
                }

                @Override
                public Object getVersion() {
                    return mod[1] == null ? "0.0NONE" : mod[1];
                }
            });
        }
        return out;
    }
}
