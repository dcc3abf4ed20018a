"""Scenario 11: network partition of the JetStream leader. Three nats-servers, each in its own
network namespace on a private bridge, R3 streams; the INGEST stream's leader is cut off from
the other two nodes (not from the services) for 20 s while webhooks are posted continuously, to
an ingest connected only to that leader (the minority side) and to one connected to the others."""

import asyncio
import tempfile
from dataclasses import dataclass
from pathlib import Path

import nats
import pytest

from indexium_devstack import netns
from indexium_devstack.harness import Sent

PARTITION_S = 20
MAX_POSTS = 600  # the posting is bounded in count as well as in time
POSTERS_PER_INGEST = 3
PAUSE_S = 0.25  # between one poster's webhooks: a steady stream, not a flood


@dataclass
class Post:
    sent: Sent
    side: str  # "minority" | "majority"
    at: float
    answered: float


@pytest.fixture
def private_network():
    reason = netns.unavailable_reason()
    if reason:
        pytest.skip(f"this machine cannot create network namespaces: {reason}")
    net = netns.PrivateNetwork(3).create()
    try:
        yield net
    finally:
        net.heal()
        net.destroy()


@pytest.fixture
async def cluster(private_network):
    with tempfile.TemporaryDirectory(prefix="indexium-partition-") as d:
        c = netns.PartitionableNatsCluster(Path(d), private_network)
        try:
            await asyncio.to_thread(c.start)
            await _wait_for_jetstream(c.url)
            yield c
        finally:
            await asyncio.to_thread(c.stop)


async def _wait_for_jetstream(url: str, timeout: float = 60) -> None:
    """The JetStream meta group must have a leader before R3 streams can be created."""
    loop = asyncio.get_running_loop()
    deadline, last = loop.time() + timeout, None
    while loop.time() < deadline:
        try:
            nc = await nats.connect(url.split(","), connect_timeout=2, max_reconnect_attempts=1)
            try:
                await nc.jetstream().account_info()
                return
            finally:
                await nc.close()
        except Exception as exc:
            last = exc
            await asyncio.sleep(0.2)
    raise AssertionError(f"the 3-node cluster never got a JetStream leader over the bridge: {last!r}")


async def _stream_leader(url: str, stream: str) -> str:
    nc = await nats.connect(url.split(","))
    try:
        for _ in range(100):
            info = await nc.jetstream().stream_info(stream)
            if info.cluster and info.cluster.leader and len(info.cluster.replicas or []) == 2:
                return info.cluster.leader
            await asyncio.sleep(0.1)
    finally:
        await nc.close()
    raise AssertionError(f"{stream} has no leader with two replicas")


async def test_partitioned_stream_leader_acks_nothing_and_loses_nothing(cluster, private_network, make_harness):
    net = private_network
    loop = asyncio.get_running_loop()
    h = await make_harness(nats_url_override=cluster.url, stream_replicas=3, services={"indexer": 1},
                           env_extra={"INDEXIUM_PUBLISH_TIMEOUT_SECONDS": "2"})
    leader = int((await _stream_leader(cluster.url, "INGEST")).removeprefix("n"))
    others = [i for i in range(3) if i != leader]
    side = {
        "minority": await h.add_proc("ingest", {"NATS_URL": cluster.client_url(leader)}),
        "majority": await h.add_proc("ingest", {"NATS_URL": ",".join(cluster.client_url(i) for i in others)}),
    }
    releases = iter(h.make_releases(MAX_POSTS, per_repo=10))
    posts: list[Post] = []
    release_of = {}
    stop = asyncio.Event()

    async def poster(name: str):
        while not stop.is_set():
            release = next(releases, None)
            if release is None:
                return
            at = loop.time()
            sent = await h.send(release, ingest=side[name])
            release_of[sent.delivery_id] = release
            posts.append(Post(sent, name, at, loop.time()))
            await asyncio.sleep(PAUSE_S)

    async def until(condition, timeout: float, what: str):
        deadline = loop.time() + timeout
        while not condition():
            assert loop.time() < deadline, f"timed out: {what}"
            await asyncio.sleep(0.1)

    posters = [asyncio.create_task(poster(name)) for name in side for _ in range(POSTERS_PER_INGEST)]
    try:
        await until(lambda: sum(p.sent.status == 202 for p in posts) >= 30, 90, "30 webhooks accepted")
        cut = loop.time()
        await asyncio.to_thread(net.cut, leader)
        await asyncio.sleep(PARTITION_S)  # the partition's length is the scenario, not a wait
        await asyncio.to_thread(net.heal)
        healed = loop.time()
        # Posting goes on until the healed side accepts again (bounded), then 30 more.
        await until(lambda: any(p.side == "minority" and p.at > healed and p.sent.status == 202 for p in posts),
                    120, "the minority side accepting again after the heal")
        after = sum(p.at > healed for p in posts)
        await until(lambda: sum(p.at > healed for p in posts) >= after + 30, 60, "30 more webhooks after the heal")
    finally:
        stop.set()
        await asyncio.gather(*posters)

    statuses = {p.sent.status for p in posts}
    accepted = {p.sent.delivery_id for p in posts if p.sent.status == 202}
    minority_accepted = {p.sent.delivery_id for p in posts if p.side == "minority" and p.sent.status == 202}
    during = [p for p in posts if p.at >= cut and p.answered <= healed]
    minority_during = [p for p in during if p.side == "minority"]
    majority_during = [p for p in during if p.side == "majority"]
    refused = [p for p in posts if p.sent.status == 503]
    # Sent after the cut and accepted: the majority's new leader at work; after the heal: rejoined.
    reelected = min((p.answered - cut for p in majority_during if p.sent.status == 202), default=None)
    rejoined = min(p.answered - healed for p in posts
                   if p.side == "minority" and p.at > healed and p.sent.status == 202)

    # A 503 asks GitHub to redeliver: do it (after the heal every node takes them again).
    redelivered = 0
    by_id = {p.sent.delivery_id: p for p in refused}
    for delivery_id, p in by_id.items():
        for _ in range(30):
            again = await h.send(release_of[delivery_id], delivery_id=delivery_id, ingest=side["majority"])
            if again.status == 202:
                redelivered += 1
                break
            await asyncio.sleep(1)
    posted = {p.sent.delivery_id for p in posts}
    missing_accepted = await h.unindexed_after_waiting(accepted, timeout=180)
    missing = await h.unindexed_after_waiting(posted, timeout=60)
    indexed = len(posted - missing)
    duplicates = await h.duplicated_versions()
    versions = (await h.query("SELECT count(*) AS n FROM mod_versions"))[0]["n"]

    print(f"\npartition of n{leader} (INGEST leader) for {PARTITION_S} s: posted {len(posts)}, "
          f"202 {len(accepted)} (minority side {len(minority_accepted)}), 503 {len(refused)}; "
          f"during the partition: minority side {len(minority_during)} posted / "
          f"{sum(p.sent.status == 202 for p in minority_during)} got 202, majority side "
          f"{len(majority_during)} posted / {sum(p.sent.status == 202 for p in majority_during)} got 202 "
          f"(first {reelected if reelected is None else round(reelected, 1)} s after the cut); minority side "
          f"accepting again {rejoined:.1f} s after the heal; "
          f"503s redelivered {redelivered}/{len(by_id)}; indexed {indexed}, versions {versions}, "
          f"duplicates {duplicates}")
    assert statuses <= {202, 503}, statuses
    assert minority_during, "no webhook reached the minority side during the partition"
    assert not [p for p in minority_during if p.sent.status == 202], \
        "the cut-off leader's side answered 202 without a quorum"
    assert any(p.sent.status == 202 for p in majority_during), \
        "the majority side never elected a leader and accepted during the partition"
    assert not missing_accepted, f"{len(missing_accepted)} webhooks answered 202 were never indexed"
    assert minority_accepted <= accepted - missing_accepted
    assert redelivered == len(by_id), "a refused webhook was still refused after the heal"
    assert not missing, f"{len(missing)} redelivered webhooks never indexed"
    assert duplicates == 0
    assert versions == len(posted)  # each release indexed exactly once

