"""The indexer's notify role: versions that became public, matched against webhook
subscriptions (``VERSIONS/notify``) and delivered from a PostgreSQL outbox
(docs/notifications.md)."""
