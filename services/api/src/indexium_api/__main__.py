# The search snapshot's fetch starts first, in a child process, while this one imports (prefetch.py).
from .prefetch import start

_prefetch = start()

from .app import main  # noqa: E402

main()
