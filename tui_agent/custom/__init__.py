"""What users write to shape the agent (skills, memory, commands), found and parsed."""
