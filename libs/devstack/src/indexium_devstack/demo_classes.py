"""A class file for the demo's quarantined version (``make run DEMO=1``): the scan stage must
hold one demo release back, so the author's dashboard and the review queue have something to show.

``com/auroramodding/lumenlanterns/PbMod``, written byte by byte by the scan test kit
(``tests/unit/scan/scankit.py: process_builder_initializer("com/auroramodding/lumenlanterns")``)
and kept here as bytes so the demo needs nothing from tests/. In Java it is::

    public class PbMod implements net.fabricmc.api.ModInitializer {
        public void onInitialize() { new ProcessBuilder(new String[]{"true"}).start(); }
    }

It is never run; the scanner only reads it (a ProcessBuilder in the mod initialiser, severity 9).
"""

import base64

PATH = "com/auroramodding/lumenlanterns/PbMod.class"
PROCESS_BUILDER_INITIALIZER = base64.b64decode(
    "yv66vgAAAD0AGgEAEGphdmEvbGFuZy9PYmplY3QHAAEBAAY8aW5pdD4BAAMoKVYMAAMABAoAAgAFAQAYamF2YS9sYW5nL1By"
    "b2Nlc3NCdWlsZGVyBwAHAQAQamF2YS9sYW5nL1N0cmluZwcACQEABHRydWUIAAsBABYoW0xqYXZhL2xhbmcvU3RyaW5nOylW"
    "DAADAA0KAAgADgEABXN0YXJ0AQAVKClMamF2YS9sYW5nL1Byb2Nlc3M7DAAQABEKAAgAEgEAJWNvbS9hdXJvcmFtb2RkaW5n"
    "L2x1bWVubGFudGVybnMvUGJNb2QHABQBAB9uZXQvZmFicmljbWMvYXBpL01vZEluaXRpYWxpemVyBwAWAQAEQ29kZQEADG9u"
    "SW5pdGlhbGl6ZQAhABUAAgABABcAAAACAAEAAwAEAAEAGAAAABEAIAAgAAAABSq3AAaxAAAAAAABABkABAABABgAAAAhACAA"
    "IAAAABW7AAhZBL0AClkDEgxTtwAPtgATV7EAAAAAAAA="
)
