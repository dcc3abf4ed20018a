"""Build the jar reader's optional C directory walk (src/indexium_jar/zip/_cdwalk.c) in place.

Run by `make env`. Without a C compiler it says so and exits 0: CentralDirectory then walks
its records in Python (zip/zipfmt.py), with the same results, about twelve times slower on a
20,000-entry directory (2.1 vs 0.17 ms; docs/indexer.md). The image (deploy/Dockerfile) runs it with
``--installed --require`` (indexium_jar.cbuild).
"""

import sys

from indexium_jar import cbuild

if __name__ == "__main__":
    sys.exit(cbuild.build_plain(None, doc=__doc__, script=__file__, package="indexium_jar.zip", module="_cdwalk",
                                what="the jar reader walks central directories", env_flags="CDWALK_CFLAGS"))
