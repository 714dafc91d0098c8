"""A threaded HTTP server on 127.0.0.1 that tests start and stop (the fakes build on it)."""

from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer
from types import TracebackType
from typing import Self


class LoopbackServer:
    """Serves ``self._http`` in a daemon thread between :meth:`start` and :meth:`stop`."""

    thread_name = "fake-server"
    _http: ThreadingHTTPServer
    _thread: threading.Thread | None = None

    def start(self) -> Self:
        if self._thread is None:
            # A short poll interval keeps shutdown (one per test) fast.
            self._thread = threading.Thread(
                target=self._http.serve_forever, args=(0.05,), name=self.thread_name, daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._http.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._http.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
