"""The ceiling: a bare aiohttp handler returning fixed JSON bytes (no middleware, no logging).

    python bench/api/bare.py PORT BODY_FILE
"""

import sys

from aiohttp import web

BODY = open(sys.argv[2], "rb").read()


async def handler(request: web.Request) -> web.Response:
    return web.Response(body=BODY, content_type="application/json")


app = web.Application()
app.router.add_get("/{tail:.*}", handler)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), access_log=None, print=None)
