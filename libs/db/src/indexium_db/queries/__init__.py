"""SQL query modules. Every function takes a connection first; callers own transactions."""
