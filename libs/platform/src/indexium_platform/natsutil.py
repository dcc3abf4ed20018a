"""NATS helpers: connect with sane reconnect settings, and the setup step's ensure_streams."""

from __future__ import annotations

import asyncio

from nats import errors as nats_errors
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from indexium_contracts.streams import BucketSpec, ConsumerSpec, ObjectStoreSpec, StreamSpec

from . import logs

log = logs.get(__name__)


async def connect(url: str, *, name: str, reconnect: bool = True) -> Client:
    """``reconnect=False`` (a one-shot command): each server is tried twice, then the last
    failure to connect is raised to the caller, who reports it (nats-py would otherwise try
    for ever, silently), and a connection lost later is not re-made."""
    nc = Client()
    failures: list[Exception] = []

    async def on_error(exc: Exception) -> None:
        if reconnect or nc.is_connected:
            log.warning("nats_error", error=str(exc))
        else:
            failures.append(exc)

    async def on_disconnect() -> None:
        # nats-py calls this for our own close and drain too (the setup step's drain printed
        # a warning at every `make run`): only a connection lost while in use is one.
        if not nc.is_closed:
            log.warning("nats_disconnected")

    async def on_reconnect() -> None:
        log.info("nats_reconnected")

    try:
        await nc.connect(
            servers=[u.strip() for u in url.split(",") if u.strip()],
            name=name,
            # A service outlives NATS restarts (readiness reports the gap); a command gives up.
            max_reconnect_attempts=-1 if reconnect else 1,
            reconnect_time_wait=0.5,
            connect_timeout=5,
            error_cb=on_error,
            disconnected_cb=on_disconnect,
            reconnected_cb=on_reconnect,
        )
    except nats_errors.NoServersError:
        if failures:
            raise failures[-1] from None
        raise
    return nc


async def ensure_streams(
    js: JetStreamContext,
    streams: tuple[StreamSpec, ...],
    consumers: tuple[ConsumerSpec, ...],
    buckets: tuple[BucketSpec, ...] = (),
    *,
    replicas: int = 1,
    object_stores: tuple[ObjectStoreSpec, ...] = (),
) -> list[str]:
    """Create or update every stream, durable consumer, KV bucket and object store. Run by the setup step only."""
    done = []
    for spec in object_stores:
        await js.create_object_store(spec.name, config=spec.config(replicas=replicas))
        done.append(f"object store {spec.name} ensured")
    for spec in buckets:
        # create_key_value is create-or-update for an unchanged config; a changed TTL updates it.
        await js.create_key_value(spec.config(replicas=replicas))
        done.append(f"kv bucket {spec.name} ensured")
    for spec in streams:
        config = spec.config(replicas=replicas)
        try:
            await js.stream_info(spec.name)
            await js.update_stream(config)
            done.append(f"stream {spec.name} updated")
        except NotFoundError:
            await js.add_stream(config)
            done.append(f"stream {spec.name} created")
    for spec in consumers:
        await js.add_consumer(spec.stream, spec.config())  # create-or-update for durables
        done.append(f"consumer {spec.stream}/{spec.durable} ensured")
    return done


async def ensure_all(js: JetStreamContext, *, replicas: int = 1) -> list[str]:
    """Everything in the contracts registry: what the setup step and test fixtures create."""
    from indexium_contracts import registry

    return await ensure_streams(js, registry.STREAMS, registry.CONSUMERS, registry.BUCKETS,
                                replicas=replicas, object_stores=registry.OBJECT_STORES)


MIN_SERVER = (2, 11)  # per-message TTL (ADR-43): telemetry's daily salts and rate-limit windows


def supports_per_message_ttl(nc: Client) -> bool:
    version = nc.connected_server_version
    return (version.major, version.minor) >= MIN_SERVER


def require_per_message_ttl(nc: Client) -> None:
    """Stop the setup step on an older server: without per-message TTL a day's telemetry salt
    would outlive its day (the privacy promise) and rate-limit windows would not reopen."""
    if not supports_per_message_ttl(nc):
        version = nc.connected_server_version
        raise SystemExit(
            f"nats-server {version.major}.{version.minor}.{version.patch} is too old: Indexium needs "
            f"{MIN_SERVER[0]}.{MIN_SERVER[1]} or newer (per-message TTL). The embedded server is 2.15."
        )


async def consumer_has_reader(js: JetStreamContext, stream: str, durable: str, *, within_s: float = 1.5,
                              every_s: float = 0.1) -> bool | None:
    """Whether some process reads the durable pull consumer now; None when JetStream does not say.

    A reader (``consumer.PullConsumer``) always holds a pull request open on the server
    (``num_waiting``, asked again at every fetch timeout, 1 s) or is working on a message it
    fetched (``num_ack_pending``); a stopped reader's request goes with its subscription, a
    killed one's expires within that timeout. The moment between one request expiring and the
    next (2 of 780 samples of a busy loop) is covered by asking again for ``within_s``, longer
    than a fetch: only "no reader" costs that wait. (A heartbeat would need a writer and a
    store; JetStream already knows.)"""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while True:
        try:
            info = await js.consumer_info(stream, durable, timeout=within_s)
        except (nats_errors.Error, asyncio.TimeoutError) as exc:
            log.warning("consumer_info_failed", consumer=f"{stream}/{durable}", error=type(exc).__name__)
            return None
        if (info.num_waiting or 0) > 0 or (info.num_ack_pending or 0) > 0:
            return True
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(every_s)


def connected_check(nc: Client):
    """A readiness check: the connection is up (it reconnects by itself when it is not)."""

    async def check() -> bool:
        return nc.is_connected

    return check


async def close(nc: Client) -> None:
    """Drain (deliver what is buffered) when connected; just close when NATS is away."""
    try:
        if nc.is_connected:
            await nc.drain()
            return
    except Exception as exc:
        log.warning("nats_drain_failed", error=str(exc))
    try:
        await nc.close()
    except Exception as exc:  # the transport is already gone: nothing left to flush
        log.debug("nats_close_failed", error=str(exc))
