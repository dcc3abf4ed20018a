package com.example.clean;

import java.util.ArrayList;
import java.util.List;
import net.fabricmc.api.ModInitializer;

/** A clean mod: logging, collections, a lambda, string concatenation, a switch. */
public class CleanMod implements ModInitializer {
    private static final List<String> NAMES = new ArrayList<>();

    static {
        NAMES.add("lantern");
    }

    @Override
    public void onInitialize() {
        NAMES.forEach(n -> System.out.println("registered " + n + " x" + NAMES.size()));
        System.out.println(kind(NAMES.size()));
    }

    static String kind(int n) {
        switch (n) {
            case 0: return "none";
            case 1: return "one";
            default: return "many";
        }
    }
}
