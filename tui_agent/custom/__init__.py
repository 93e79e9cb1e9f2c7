"""What users write to shape the agent (memory, skills, commands): found and parsed."""
