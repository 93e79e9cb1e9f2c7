"""The chat app's widgets: the transcript and its messages, tool cards, lists, the
prompt and the status bar."""
