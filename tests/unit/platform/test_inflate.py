import gzip
import zlib

import pytest

from indexium_platform.inflate import BadStream, Inflater, TooLarge, layers

BODY = b'{"hashes": []}' * 100


def inflate(encoding: str, data: bytes, limit: int = 1 << 20, chunk: int = 7) -> bytes:
    inflater = Inflater(encoding, limit)
    for i in range(0, len(data), chunk):
        inflater.feed(data[i:i + chunk])
    return inflater.finish()


def test_gzip_zlib_and_raw_deflate_inflate_in_any_chunks():
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    assert inflate("gzip", gzip.compress(BODY)) == BODY
    assert inflate("deflate", zlib.compress(BODY)) == BODY
    assert inflate("deflate", raw.compress(BODY) + raw.flush()) == BODY
    assert inflate("gzip", gzip.compress(BODY), chunk=1 << 16) == BODY


@pytest.mark.parametrize("cut", [1, 4, 8])
def test_a_stream_cut_short_is_truncated(cut):
    with pytest.raises(BadStream, match="truncated"):
        inflate("gzip", gzip.compress(BODY)[:-cut])
    with pytest.raises(BadStream, match="truncated"):
        inflate("deflate", zlib.compress(BODY)[:-cut])


def test_nothing_at_all_is_truncated_and_garbage_is_refused():
    with pytest.raises(BadStream, match="truncated"):
        Inflater("gzip", 10).finish()
    with pytest.raises(BadStream, match="not valid gzip"):
        inflate("gzip", b"notgzip at all")
    with pytest.raises(BadStream, match="after the end"):
        inflate("gzip", gzip.compress(BODY) + gzip.compress(BODY))


def test_output_is_capped_while_inflating():
    bomb = gzip.compress(b"\0" * (10 << 20))
    inflater = Inflater("gzip", 1 << 20)
    with pytest.raises(TooLarge):
        inflater.feed(bomb)
    assert inflate("gzip", gzip.compress(b"x" * 100), limit=100) == b"x" * 100
    with pytest.raises(TooLarge):
        inflate("gzip", gzip.compress(b"x" * 101), limit=100)


def test_layers_leave_identity_out():
    assert layers([]) == [] and layers(["identity"]) == []
    assert layers(["GZip"]) == ["gzip"] and layers(["gzip, br", "identity"]) == ["gzip", "br"]
