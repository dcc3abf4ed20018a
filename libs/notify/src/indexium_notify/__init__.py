"""Webhook notifications shared by the API (subscriptions) and the indexer's notify role
(deliveries): the target URL policy (targets), signing (signing), the payloads (payloads)."""
