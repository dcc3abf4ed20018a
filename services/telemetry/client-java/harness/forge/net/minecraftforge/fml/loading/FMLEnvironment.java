package net.minecraftforge.fml.loading;

import net.minecraftforge.api.distmarker.Dist;

/** Test stub: the side comes from harness.dist (default DEDICATED_SERVER). */
public final class FMLEnvironment {
    public static final Dist dist = Dist.valueOf(System.getProperty("harness.dist", "DEDICATED_SERVER"));
}
