"""Where the surfaces live: the prefix of /api/v1, which the edge (which route counts against
which budget), the OpenAPI document and /v2 (its icon URLs are /api/v1's icon route) need too."""

V1 = "/api/v1"
