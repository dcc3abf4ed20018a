"""Operator commands: setup (migrations + streams), dead letters"""
