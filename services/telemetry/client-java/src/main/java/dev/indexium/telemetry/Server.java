package dev.indexium.telemetry;

import java.io.File;
import java.io.FileInputStream;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Properties;

/**
 * What the running loader says about this server, read by reflection on its public API only:
 * FabricLoader.getInstance().getAllMods(), QuiltLoader.getAllMods(), (Neo)Forge's
 * ModList.get().getMods(). The jar carries no loader classes; every class name is a constant.
 */
final class Server {
    private Server() {
    }

    /** "fabric", "quilt", "forge", "neoforge", or null when this is not a dedicated server. */
    static String platform(String entry) {
        try {
            if ("fabric".equals(entry)) {
                return quiltPresent() ? "quilt" : "fabric";
            }
            Object dist;
            if ("forge".equals(entry)) {
                dist = dist(Class.forName("net.minecraftforge.fml.loading.FMLEnvironment"));
            } else if ("neoforge".equals(entry)) {
                dist = dist(Class.forName("net.neoforged.fml.loading.FMLEnvironment"));
            } else {
                return null;
            }
            return dist != null && "DEDICATED_SERVER".equals(dist.toString()) ? entry : null;
        } catch (Throwable t) {
            Log.debug("cannot tell the side: " + t);
            return null;
        }
    }

    private static boolean quiltPresent() {
        try {
            Class.forName("org.quiltmc.loader.api.QuiltLoader");
            return true;
        } catch (Throwable t) {
            return false;
        }
    }

    private static Object dist(Class<?> environment) throws Exception {
        try {
            return environment.getField("dist").get(null);
        } catch (NoSuchFieldException e) {
            return environment.getMethod("getDist").invoke(null); // newer FML
        }
    }

    /** Every installed mod as {id, version} in the loader's order (version may be null). */
    static List<String[]> mods(String platform) throws Exception {
        List<String[]> out = new ArrayList<String[]>();
        if ("quilt".equals(platform)) {
            Class<?> loader = Class.forName("org.quiltmc.loader.api.QuiltLoader");
            Method metadata = Class.forName("org.quiltmc.loader.api.ModContainer").getMethod("metadata");
            Class<?> meta = Class.forName("org.quiltmc.loader.api.ModMetadata");
            Method id = meta.getMethod("id");
            Method version = meta.getMethod("version");
            Method raw = Class.forName("org.quiltmc.loader.api.Version").getMethod("raw");
            for (Object mod : (Collection<?>) loader.getMethod("getAllMods").invoke(null)) {
                Object m = metadata.invoke(mod);
                Object v = version.invoke(m);
                out.add(new String[] {str(id.invoke(m)), v == null ? null : str(raw.invoke(v))});
            }
        } else if ("fabric".equals(platform)) {
            Class<?> loader = Class.forName("net.fabricmc.loader.api.FabricLoader");
            Object instance = loader.getMethod("getInstance").invoke(null);
            Method metadata = Class.forName("net.fabricmc.loader.api.ModContainer").getMethod("getMetadata");
            Class<?> meta = Class.forName("net.fabricmc.loader.api.metadata.ModMetadata");
            Method id = meta.getMethod("getId");
            Method version = meta.getMethod("getVersion");
            Method friendly = Class.forName("net.fabricmc.loader.api.Version").getMethod("getFriendlyString");
            for (Object mod : (Collection<?>) loader.getMethod("getAllMods").invoke(instance)) {
                Object m = metadata.invoke(mod);
                Object v = version.invoke(m);
                out.add(new String[] {str(id.invoke(m)), v == null ? null : str(friendly.invoke(v))});
            }
        } else {
            Class<?> list;
            Class<?> info;
            if ("forge".equals(platform)) {
                list = Class.forName("net.minecraftforge.fml.ModList");
                info = Class.forName("net.minecraftforge.forgespi.language.IModInfo");
            } else {
                list = Class.forName("net.neoforged.fml.ModList");
                info = Class.forName("net.neoforged.neoforgespi.language.IModInfo");
            }
            Object instance = list.getMethod("get").invoke(null);
            Method id = info.getMethod("getModId");
            Method version = info.getMethod("getVersion");
            for (Object mod : (Collection<?>) list.getMethod("getMods").invoke(instance)) {
                Object v = version.invoke(mod);
                out.add(new String[] {str(id.invoke(mod)), v == null ? null : v.toString()});
            }
        }
        return out;
    }

    /** Players online, or -1 when the loader does not tell. */
    static int playerCount(String platform) {
        try {
            Object server;
            if ("forge".equals(platform)) {
                server = Class.forName("net.minecraftforge.server.ServerLifecycleHooks")
                        .getMethod("getCurrentServer").invoke(null);
            } else if ("neoforge".equals(platform)) {
                server = Class.forName("net.neoforged.neoforge.server.ServerLifecycleHooks")
                        .getMethod("getCurrentServer").invoke(null);
            } else {
                Class<?> loader = Class.forName("net.fabricmc.loader.api.FabricLoader");
                server = loader.getMethod("getGameInstance").invoke(loader.getMethod("getInstance").invoke(null));
            }
            if (server == null) {
                return -1;
            }
            // Mojang's name (Forge, NeoForge), Yarn's, and Fabric's runtime (intermediary) name.
            for (String name : new String[] {"getPlayerCount", "getCurrentPlayerCount", "method_3788"}) {
                try {
                    Object n = server.getClass().getMethod(name).invoke(server);
                    if (n instanceof Integer) {
                        return (Integer) n;
                    }
                } catch (NoSuchMethodException e) {
                    // try the next name
                }
            }
        } catch (Throwable t) {
            // not available on this loader or version
        }
        return -1;
    }

    /** online-mode from server.properties in the server's directory, or null when unknown. */
    static Boolean onlineMode() {
        File file = new File(System.getProperty("user.dir", "."), "server.properties");
        if (!file.isFile()) {
            return null;
        }
        try {
            Properties props = new Properties();
            InputStream in = new FileInputStream(file);
            try {
                props.load(in);
            } finally {
                in.close();
            }
            String value = props.getProperty("online-mode");
            return value == null ? null : Boolean.valueOf("true".equalsIgnoreCase(value.trim()));
        } catch (Exception e) {
            return null;
        }
    }

    private static String str(Object o) {
        return o == null ? null : o.toString();
    }
}
