"""Indexer service: reads release jars with Range requests, writes PostgreSQL"""
