"""Consolidation: recalls of daily-log hits, and their promotion into MEMORY.md."""
