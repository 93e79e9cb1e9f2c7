"""The headless core: the chat loop, events, the LLM client, approval, sessions."""
