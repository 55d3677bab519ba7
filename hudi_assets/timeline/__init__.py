"""The timeline: instants, active and archived timelines, and instant metadata."""
