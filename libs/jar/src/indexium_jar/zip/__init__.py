"""The pure ZIP core: record formats, the random-access reader over byte windows, span
planning and the packed entry sizes. No I/O: nothing here imports aiohttp, asyncio or socket
(an import-linter contract in the root pyproject.toml holds this)."""
