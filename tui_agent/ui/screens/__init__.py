"""The chat app's screens: modals (approval, project trust, pickers, help) and the
servers and tools screens."""
