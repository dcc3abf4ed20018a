"""Fault-suite fixtures: a whole Indexium of real processes per test (see indexium_devstack.harness)."""

import pytest

from indexium_devstack.harness import Harness


@pytest.fixture
async def make_harness(tmp_path):
    made = []

    async def make(**kwargs) -> Harness:
        h = Harness(tmp_path / f"h{len(made)}", **kwargs)
        made.append(h)
        return await h.start()

    yield make
    for h in made:
        codes = await h.stop()
        for name, procs in h.procs.items():
            for i, p in enumerate(procs):
                if p.proc is not None and p.proc.returncode not in (0, -9):
                    print(f"--- {name}-{i} exited {p.proc.returncode} ---\n{h.logs(name, i)}")
