"""Webhook deliveries of ``FakeGitHub``: sending them signed, recording them for
``/app/hook/deliveries``, and redelivering on request."""

from __future__ import annotations

import asyncio

from .models import Delivery
from .webhooks import deliver, encode_payload, new_delivery


class Deliveries:
    """Mixin of ``FakeGitHub``; uses its ``webhook_url``, ``webhook_secret``, ``hook_id``,
    ``state``, ``app``, and the HTTP session and background tasks it owns."""

    def configure_webhook(self, url: str | None, secret: str | None) -> None:
        """Where ``POST /app/hook/deliveries/{id}/attempts`` re-sends deliveries."""
        self.webhook_url, self.webhook_secret = url, secret

    async def send_webhook(
        self,
        url: str,
        event: str,
        payload: dict | bytes,
        secret: str | None,
        delivery_id: str | None = None,
    ) -> int:
        """POST a delivery with GitHub's headers; records it for ``/app/hook/deliveries``.
        Returns the receiver's HTTP status (0 if it could not be reached)."""
        d = await self.deliver(url, event, payload, secret, delivery_id=delivery_id)
        return d.status_code

    async def deliver(
        self,
        url: str,
        event: str,
        payload: dict | bytes,
        secret: str | None,
        *,
        delivery_id: str | None = None,
        redelivery: bool = False,
    ) -> Delivery:
        """Like ``send_webhook`` but returns the recorded ``Delivery``."""
        if self._session is None:
            raise RuntimeError("FakeGitHub is not started")
        return await deliver(
            self._session,
            self.state,
            url,
            event,
            encode_payload(payload),
            secret,
            guid=delivery_id,
            hook_id=self.hook_id,
            app_id=self.app.app_id or None,
            redelivery=redelivery,
        )

    def record_delivery(
        self,
        event: str,
        payload: dict | bytes,
        status_code: int = 200,
        *,
        guid: str | None = None,
        redelivery: bool = False,
        delivered_at: float | None = None,
        duration: float = 0.05,
    ) -> Delivery:
        """Record a delivery as if it had been sent (for redelivery / catch-up tests)."""
        return new_delivery(
            self.state,
            event,
            encode_payload(payload),
            status_code,
            guid=guid,
            redelivery=redelivery,
            delivered_at=delivered_at,
            duration=duration,
            url=self.webhook_url,
        )

    @property
    def deliveries(self) -> list[Delivery]:
        return self.state.deliveries

    def _schedule_redelivery(self, original: Delivery) -> None:
        async def run() -> None:
            if self.webhook_url is None:
                new_delivery(
                    self.state, original.event, original.body, 0,
                    guid=original.guid, redelivery=True,
                )
                return
            await self.deliver(
                self.webhook_url,
                original.event,
                original.body,
                self.webhook_secret,
                delivery_id=original.guid,
                redelivery=True,
            )

        task = asyncio.get_running_loop().create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
