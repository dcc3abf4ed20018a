package com.example.pb;

import net.fabricmc.api.ModInitializer;

/** Starts a process from its initialiser (never run by the tests). */
public class PbMod implements ModInitializer {
    @Override
    public void onInitialize() {
        try {
            new ProcessBuilder("true").start();
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }
}
