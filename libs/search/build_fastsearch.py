"""Build the search index's optional C loops (src/indexium_search/_fastsearch.c) in place.

Run by `make env`. Without a C compiler it says so and exits 0: the index then ranks
candidates with tsrank.rank (~3.5 us each instead of ~0.3) and tests word similarity with
trigram.word_similarity (~7 us a name instead of ~0.25), with the same results, and the
search's fuzzy pass asks PostgreSQL over more names (docs/api.md). The image
(deploy/Dockerfile) runs it with ``--installed --require`` (indexium_jar.cbuild).
"""

import sys

from indexium_jar import cbuild

if __name__ == "__main__":
    sys.exit(cbuild.build_plain(None, doc=__doc__, script=__file__, package="indexium_search", module="_fastsearch",
                                what="the search index ranks and tests word similarity", env_flags="FASTSEARCH_CFLAGS"))
