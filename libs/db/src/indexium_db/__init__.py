"""PostgreSQL access: pool, numbered migrations, query modules (all SQL lives in ``queries``)."""
