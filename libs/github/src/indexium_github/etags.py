"""A bounded LRU of GET responses by (credential, URL), for conditional requests.

GitHub answers ``If-None-Match`` with 304 and no body when nothing changed, and a 304
does not count against the quota; we then serve the body we kept. Bounded by entries
and by bytes so a long reconciliation cannot grow the process without limit.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Cached:
    etag: str
    headers: Mapping[str, str]  # case-insensitive (multidict)
    body: bytes


class EtagCache:
    def __init__(self, max_entries: int = 4096, max_bytes: int = 64 * 1024 * 1024):
        self._items: OrderedDict[tuple[str, str], Cached] = OrderedDict()
        self._max_entries, self._max_bytes = max_entries, max_bytes
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: tuple[str, str]) -> Cached | None:
        item = self._items.get(key)
        if item is not None:
            self._items.move_to_end(key)
        return item

    def put(self, key: tuple[str, str], item: Cached) -> None:
        if len(item.body) > self._max_bytes // 8:
            return  # one huge body would evict everything else
        old = self._items.pop(key, None)
        if old is not None:
            self._bytes -= len(old.body)
        self._items[key] = item
        self._bytes += len(item.body)
        while self._items and (len(self._items) > self._max_entries or self._bytes > self._max_bytes):
            _, evicted = self._items.popitem(last=False)
            self._bytes -= len(evicted.body)
