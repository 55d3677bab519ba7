"""The timeline: instants, active and archived timelines, instant metadata, and the layouts
(`layout.py`) that say how each table version names, places and encodes them."""
