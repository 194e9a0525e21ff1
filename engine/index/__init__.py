"""The index: the store (the only SQL), the indexer and its jobs, freshness, the watcher."""
