"""Faces shaped like other memory libraries' APIs, over shiyi's own memory."""
