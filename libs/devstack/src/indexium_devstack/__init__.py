"""Local stack: embedded NATS and PostgreSQL, GitHub-shaped test server, demo"""
