"""Memory files: the one reader and writer, edit sessions, the workspace's listing, the journal."""
