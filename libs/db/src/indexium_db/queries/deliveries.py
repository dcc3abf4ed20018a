"""Processed webhook deliveries (idempotency record) and per-job attempt counting."""

from __future__ import annotations

from datetime import datetime

import asyncpg


async def record(
    conn: asyncpg.Connection, delivery_id: str, event: str, action: str | None,
    received_at: datetime, outcome: str,
) -> None:
    await conn.execute(
        """INSERT INTO webhook_deliveries (delivery_id, event, action, received_at, outcome)
           VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (delivery_id) DO UPDATE SET processed_at = now(), outcome = EXCLUDED.outcome""",
        delivery_id, event, action, received_at, outcome,
    )


async def add_attempt(conn: asyncpg.Connection, job_key: str, error: str) -> int:
    """Count one real attempt of a job (infrastructure outages are not counted); return the total."""
    return await conn.fetchval(
        """INSERT INTO job_attempts (job_key, attempts, last_error) VALUES ($1, 1, $2)
           ON CONFLICT (job_key) DO UPDATE SET attempts = job_attempts.attempts + 1,
               last_error = EXCLUDED.last_error, updated_at = now()
           RETURNING attempts""",
        job_key, error,
    )


async def clear_attempts(conn: asyncpg.Connection, job_key: str) -> None:
    await conn.execute("DELETE FROM job_attempts WHERE job_key = $1", job_key)
