"""PostgreSQL access: pool, numbered migrations, query modules (all SQL lives in ``queries``,
but search's: ``indexium_search.sqlpath`` and ``indexium_search.indexed``)."""
