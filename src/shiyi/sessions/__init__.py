"""The chat transcripts: sessions, runs and every message, in one SQLite file
(:mod:`shiyi.sessions.log`).  Memory is built from them; they are not memory."""
