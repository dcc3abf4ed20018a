"""collect_less: a serving process's youngest generation collected past its threshold, and
what start-up loaded (the cleanup contexts' resources included) frozen out of later passes."""

from __future__ import annotations

import gc

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from indexium_platform.metrics import ServiceMetrics
from indexium_platform.web import base_app, collect_less


async def test_what_start_up_loaded_is_frozen_and_young_passes_are_rarer():
    threshold, frozen_before = gc.get_threshold(), gc.get_freeze_count()
    app = base_app("gc", ServiceMetrics("gc"))
    loaded: list[object] = []

    async def resource(app: web.Application):
        loaded.append({"a start-up cache": [1, 2, 3]})  # made by a cleanup context, at start-up
        yield

    app.cleanup_ctx.append(resource)
    try:
        collect_less(app, 10_000)
        assert gc.get_threshold() == (max(10_000, threshold[0]), *threshold[1:])
        async with TestClient(TestServer(app)) as client:
            assert (await client.get("/healthz")).status == 200
            assert gc.get_freeze_count() > frozen_before
            # Frozen: in no generation a collection walks.
            assert not any(o is loaded[0] for o in gc.get_objects())
            later = {"made while serving": []}
            assert any(o is later for o in gc.get_objects())
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
