"""The chat transcripts: sessions, runs and every message, in one SQLite file
(:mod:`shiyi.sessions.log`; its schema in ``log_schema``, the records read from it in
``records``, its hard deletes in ``forget_rows``) and a readable file per finished run
(``run_files``).  Memory is built from them; they are not memory."""
