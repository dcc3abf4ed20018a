"""The per-client cap on uncached work: slots, the wait in order, refusals, and clean-up."""

import asyncio

import pytest

from indexium_api.core.inflight import QUEUE_PER_SLOT, Busy, InFlight


async def test_a_client_over_its_cap_waits_its_turn_and_others_never_wait_for_it():
    cap = InFlight(2, wait_s=5)
    release = asyncio.Event()
    order = []

    async def work(key, n):
        async with cap.slot(key):
            order.append((key, n))
            await release.wait()

    flood = [asyncio.create_task(work("flood", n)) for n in range(5)]
    await asyncio.sleep(0.01)
    assert order == [("flood", 0), ("flood", 1)] and cap.running("flood") == 2
    other = asyncio.create_task(work("other", 0))
    await asyncio.sleep(0.01)
    assert ("other", 0) in order  # another client has slots of its own
    release.set()
    await asyncio.gather(*flood, other)
    assert [n for k, n in order if k == "flood"] == [0, 1, 2, 3, 4]  # in the order they came
    assert len(cap) == 0 and cap.running("flood") == 0  # nothing kept once nothing is in flight


async def test_the_wait_and_the_queue_are_bounded():
    cap = InFlight(1, wait_s=0.05)
    hold = asyncio.Event()

    async def holder():
        async with cap.slot("a"):
            await hold.wait()

    first = asyncio.create_task(holder())
    await asyncio.sleep(0)
    with pytest.raises(Busy):  # waited 50 ms, no slot came
        async with cap.slot("a"):
            pass
    waiting = [asyncio.create_task(cap.acquire("a")) for _ in range(QUEUE_PER_SLOT)]
    await asyncio.sleep(0)
    with pytest.raises(Busy):  # the queue is full: refused at once
        await cap.acquire("a")
    hold.set()
    await first
    results = await asyncio.gather(*waiting, return_exceptions=True)
    # The first waiter got the slot handed over; the rest timed out, and the slot was released.
    got = [r for r in results if r is None]
    assert len(got) == 1 and all(isinstance(r, Busy) for r in results if r is not None)
    cap.release("a")
    assert len(cap) == 0


async def test_a_waiter_that_hangs_up_takes_no_slot_and_a_handed_slot_is_passed_on():
    cap = InFlight(1, wait_s=5)
    await cap.acquire("a")
    gone = asyncio.create_task(cap.acquire("a"))
    after = asyncio.create_task(cap.acquire("a"))
    await asyncio.sleep(0)
    gone.cancel()
    await asyncio.sleep(0)
    cap.release("a")  # skips the one that left
    await asyncio.wait_for(after, 1)
    assert cap.running("a") == 1
    # Handed a slot, then cancelled before it ran: the slot goes on to the next one.
    handed = asyncio.create_task(cap.acquire("a"))
    last = asyncio.create_task(cap.acquire("a"))
    await asyncio.sleep(0)
    cap.release("a")
    handed.cancel()
    await asyncio.sleep(0)
    await asyncio.wait_for(last, 1)
    cap.release("a")
    assert len(cap) == 0


async def test_a_waiter_whose_turn_a_release_already_skipped_leaves_cleanly():
    """The wait's end cancels its turn at once, but the waiter runs its clean-up only later: a
    release in between skips (and drops) the cancelled turn. The clean-up must not fail then
    (it did: a 500 for every such request under a flood)."""
    cap = InFlight(1, wait_s=5)
    await cap.acquire("a")
    waiter = asyncio.create_task(cap.acquire("a"))
    await asyncio.sleep(0)
    waiter.cancel()  # its turn is cancelled now; its clean-up has not run yet
    cap.release("a")
    (result,) = await asyncio.gather(waiter, return_exceptions=True)
    assert isinstance(result, asyncio.CancelledError)
    assert len(cap) == 0
