"""Build the search's optional C word similarity (src/indexium_db/_trigram.c) in place.

Run by `make env`. Without a C compiler it says so and exits 0: trigram.word_similarities
then tests names in Python (trigram.word_similarity, ~20 us a name), with the same results,
and the search's fuzzy pass asks PostgreSQL over more names (docs/api.md). The image
(deploy/Dockerfile) runs it with ``--installed --require`` (indexium_jar.cbuild).
"""

import sys

from indexium_jar import cbuild

if __name__ == "__main__":
    sys.exit(cbuild.build_plain(None, doc=__doc__, script=__file__, package="indexium_db", module="_trigram",
                                what="the search tests word similarity", env_flags="TRIGRAM_CFLAGS"))
