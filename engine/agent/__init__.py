"""What agents call: the memory tools, session-start context, transcript archive, prompts."""
