"""The OpenAPI paths and schemas of /api/v1/me, /tokens and /subscriptions (subscriptions.py,
accounts.py), registered with apidoc.register; the contract test checks every answer against them."""

from __future__ import annotations

_NO_NUL = "^[^\\u0000]*$"
_UUID = {"type": "string", "format": "uuid"}
_TIME = {"type": "string", "format": "date-time"}


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _nullable(schema: dict) -> dict:
    return {"anyOf": [schema, {"type": "null"}]}


def _error(description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": _ref("Error")}}}


def _json(schema: dict, description: str = "OK") -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


AUTH = ("Authenticated by the site's session cookie (a change also sends the session's CSRF token in "
        "X-CSRF-Token, from GET /api/v1/me) or by a personal API token: Authorization: Bearer idx_....")


def _responses(ok: dict, status: str = "200", *, body: bool = False, found: bool = False) -> dict:
    out = {status: ok,
           "401": _error("Not signed in, or the token is unknown or revoked."),
           "403": _error("The CSRF token is missing or wrong, a limit is reached, or the route needs the session."),
           "429": _error("Rate limit exceeded."),
           "503": _error("PostgreSQL is unavailable, or subscriptions are not configured.")}
    if body or found:
        out["400"] = _error("The body (or a parameter) is invalid; the description names it.")
    if body:
        out["413"] = _error("The body is larger than 16 KiB.")
        out["415"] = _error("Unsupported Content-Encoding.")
    if found:
        out["404"] = _error("No such subscription, delivery or token (or not yours).")
    return out


def _id(name: str) -> dict:
    return {"name": name, "in": "path", "required": True, "schema": _UUID}


def _op(op_id: str, summary: str, responses: dict, params: list | None = None, body: dict | None = None) -> dict:
    out = {"operationId": op_id, "summary": summary, "description": AUTH, "responses": responses}
    if params:
        out["parameters"] = params
    if body:
        out["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
    return out


def paths() -> dict:
    sub = [_id("subscription_id")]
    return {
        "/me": {"get": _op("getMe", "Who is calling, and the session's CSRF token", _responses(_json(_ref("Me"))))},
        "/tokens": {
            "get": _op("listTokens", "Your personal API tokens (session only)",
                       _responses(_json({"type": "object", "additionalProperties": False, "required": ["tokens"],
                                         "properties": {"tokens": {"type": "array", "items": _ref("ApiToken")}}}))),
            "post": _op("createToken", "A new personal API token, shown once (session only)",
                        _responses(_json(_ref("NewApiToken"), "Created"), "201", body=True), body=_ref("TokenBody")),
        },
        "/tokens/{token_id}": {"delete": _op("revokeToken", "Revoke a token (session only)",
                                             _responses({"description": "Revoked"}, "204", found=True),
                                             [_id("token_id")])},
        "/subscriptions": {
            "get": _op("listSubscriptions", "Your subscriptions and your limits",
                       _responses(_json(_ref("SubscriptionList")))),
            "post": _op("createSubscription", "Subscribe to a mod, an author or a search; the answer carries the "
                        "signing secret, shown only this once",
                        _responses(_json(_ref("NewSubscriptionAnswer"), "Created"), "201", body=True),
                        body=_ref("SubscriptionBody")),
        },
        "/subscriptions/{subscription_id}": {
            "get": _op("getSubscription", "One subscription", _responses(_json(_ref("Subscription")), found=True), sub),
            "delete": _op("deleteSubscription", "Delete a subscription (its pending deliveries go with it)",
                          _responses({"description": "Deleted"}, "204", found=True), sub),
        },
        "/subscriptions/{subscription_id}/resume": {"post": _op(
            "resumeSubscription", "Resume a paused subscription; what was pending goes at once",
            _responses(_json(_ref("Subscription")), found=True), sub)},
        "/subscriptions/{subscription_id}/deliveries": {"get": _op(
            "subscriptionDeliveries", "The delivery log: the newest deliveries and attempts",
            _responses(_json(_ref("DeliveryLog")), found=True), sub)},
        "/subscriptions/{subscription_id}/deliveries/{delivery_id}/redeliver": {"post": _op(
            "redeliver", "Send a delivery again, with the same X-Indexium-Delivery",
            _responses(_json({"type": "object", "additionalProperties": False, "required": ["queued"],
                              "properties": {"queued": {"type": "boolean"}}}, "Queued"), "202", found=True),
            [*sub, _id("delivery_id")])},
    }


def _object(props: dict, required: list[str] | None = None) -> dict:
    return {"type": "object", "additionalProperties": False, "properties": props,
            "required": list(props) if required is None else required}


_STRINGS = {"type": "array", "items": {"type": "string"}}
_SUBSCRIPTION = {
    "id": _UUID, "kind": {"type": "string", "enum": ["mod", "author", "search"]},
    "mod": _nullable({"type": "string"}), "author": _nullable({"type": "string"}),
    "search": _nullable(_object({"q": _nullable({"type": "string"}), "category": _STRINGS})),
    "loaders": _STRINGS, "game_versions": _STRINGS, "game_version_min": _nullable({"type": "string"}),
    "version_types": _STRINGS, "format": {"type": "string", "enum": ["indexium", "discord"]},
    "target_url": {"type": "string"}, "state": {"type": "string", "enum": ["active", "paused"]},
    "paused_at": _nullable(_TIME), "paused_reason": _nullable({"type": "string"}),
    "failing_since": _nullable(_TIME), "consecutive_failures": {"type": "integer", "minimum": 0},
    "created_at": _TIME,
}
_TOKEN = {"id": _UUID, "name": {"type": "string"}, "prefix": {"type": "string"}, "created_at": _TIME,
          "last_used_at": _nullable(_TIME)}


def schemas() -> dict:
    bounded = lambda n, most: {"type": "array", "maxItems": most,  # noqa: E731
                               "items": {"type": "string", "minLength": 1, "maxLength": n, "pattern": _NO_NUL}}
    return {
        "Me": _object({"login": {"type": "string"}, "github_user_id": {"type": "integer"},
                       "via": {"type": "string", "enum": ["session", "token"]},
                       "csrf_token": _nullable({"type": "string"})}),
        "ApiToken": _object(_TOKEN),
        "NewApiToken": _object({**_TOKEN, "token": {"type": "string"}}),
        "TokenBody": _object({"name": {"type": "string", "minLength": 1, "maxLength": 100, "pattern": _NO_NUL}}),
        "Subscription": _object(_SUBSCRIPTION),
        "NewSubscriptionAnswer": _object({**_SUBSCRIPTION, "secret": {"type": "string"}}),
        "SubscriptionList": _object({
            "subscriptions": {"type": "array", "items": _ref("Subscription")},
            "limits": _object({k: {"type": "integer", "minimum": 0} for k in (
                "subscriptions", "subscriptions_used", "deliveries_per_hour", "deliveries_this_hour")})}),
        "SubscriptionBody": _object({
            "target_url": {"type": "string", "maxLength": 2048, "description": "https (http only where the "
                           "operator allows it); public addresses only"},
            "format": {"type": "string", "enum": ["indexium", "discord"], "default": "indexium"},
            "mod": {"type": "string", "maxLength": 64, "description": "a mod's slug"},
            "author": {"type": "string", "maxLength": 64, "description": "an author's GitHub login"},
            "search": _object({"q": {"type": "string", "maxLength": 200, "pattern": _NO_NUL},
                               "category": bounded(64, 20)}, required=[]),
            "loaders": bounded(32, 20), "game_versions": bounded(64, 50),
            "game_version_min": {"type": "string", "maxLength": 64, "pattern": _NO_NUL,
                                 "description": "this Minecraft version and newer (the versions table's order)"},
            "version_types": {"type": "array", "maxItems": 3,
                              "items": {"type": "string", "enum": ["release", "beta", "alpha"]}},
        }, required=["target_url"]),
        "DeliveryLog": _object({
            "subscription": _ref("Subscription"),
            "deliveries": {"type": "array", "items": _object({
                "id": _UUID, "mod": {"type": "string"}, "version_number": {"type": "string"},
                "event": {"type": "string"},
                "state": {"type": "string", "enum": ["pending", "delivered", "failed", "cancelled"]},
                "attempts": {"type": "integer"}, "next_attempt_at": _TIME, "deadline_at": _TIME,
                "redelivered": {"type": "boolean"}, "last_status": _nullable({"type": "integer"}),
                "last_error": _nullable({"type": "string"}), "created_at": _TIME,
                "finished_at": _nullable(_TIME)})},
            "attempts": {"type": "array", "items": _object({
                "delivery_id": _UUID, "attempted_at": _TIME,
                "outcome": {"type": "string",
                            "enum": ["ok", "http_error", "network", "timeout", "refused", "deferred"]},
                "response_code": _nullable({"type": "integer"}), "latency_ms": _nullable({"type": "integer"}),
                "response_head": _nullable({"type": "string"}), "error": _nullable({"type": "string"})})},
        }),
    }
