"""Fault-suite fixtures: a whole Indexium of real processes per test (see indexium_devstack.harness)."""

import tempfile
from pathlib import Path

import pytest

from indexium_devstack.harness import Harness


@pytest.fixture
async def make_harness():
    made = []
    # Not under tmp_path: every pytest start resets /tmp/pytest-of-<user> to 0700, which locks
    # the unprivileged postgres user out of its data directory while another run starts.
    with tempfile.TemporaryDirectory(prefix="indexium-faults-") as root:

        async def make(**kwargs) -> Harness:
            h = Harness(Path(root) / f"h{len(made)}", **kwargs)
            made.append(h)
            return await h.start()

        yield make
        for h in made:
            await h.stop()
            for name, procs in h.procs.items():
                for i, p in enumerate(procs):
                    if p.proc is not None and p.proc.returncode not in (0, -9):
                        print(f"--- {name}-{i} exited {p.proc.returncode} ---\n{h.logs(name, i)}")
