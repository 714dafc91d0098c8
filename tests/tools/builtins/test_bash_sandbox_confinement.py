"""The bubblewrap sandbox against what a command may try from inside it (issue 29): reaching
loopback services, lifting the sandbox with root's capabilities, reading secrets below the
workspace root, exhausting processes or memory, and running an interpreter under /tmp.

Every test runs the real bash tool under the real bwrap."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shiyi.config import Settings, load_settings
from shiyi.errors import ToolError
from shiyi.tools.base import ToolContext
from shiyi.tools.builtins import shell
from shiyi.tools.builtins.sandbox import bwrap_runs, find_bwrap, workspace_secrets
from shiyi.tools.builtins.sandbox_limits import pids_cgroup_parent
from shiyi.tools.builtins.shell import bash

BWRAP = find_bwrap()
pytestmark = pytest.mark.skipif(BWRAP is None or not bwrap_runs(BWRAP), reason="no bwrap")

SECRET = "secret-do-not-leak-4712"
AS_ROOT = os.geteuid() == 0


@pytest.fixture(autouse=True)
def _short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shell, "KILL_GRACE", 0.5)


@pytest.fixture
def settings(workspace: Path) -> Settings:
    """Bash required to run in bwrap, the data dir inside the workspace holding a secret
    (so that hiding it means something: outside /tmp's workspace it is simply absent)."""
    loaded = load_settings(cwd=workspace, workspace=workspace, home=workspace / ".data")
    loaded.tools.bash_sandbox = "bwrap"
    loaded.data_dir.mkdir()
    (loaded.data_dir / "server.json").write_text(f'{{"token": "{SECRET}"}}')
    return loaded


async def run(settings: Settings, **arguments: Any) -> str:
    ctx = ToolContext.for_settings(settings)
    return await bash.invoke(bash.validate(arguments), ctx)


# --- item 1: no way to the loopback API ----------------------------------------------------


@pytest.fixture
def listener() -> Iterator[int]:
    """A real TCP server on loopback (like the chat's API): its port."""
    server = socket.create_server(("127.0.0.1", 0))
    server.listen(8)
    yield int(server.getsockname()[1])
    server.close()


CONNECT = (
    "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3); "
    "print('CONNECTED')\" 2>&1 | tail -1"
)


async def test_a_sandboxed_command_cannot_reach_a_loopback_server(
    settings: Settings, listener: int
) -> None:
    out = await run(settings, command=CONNECT.format(port=listener))
    assert "CONNECTED" not in out
    assert "Connection refused" in out or "unreachable" in out
    assert f"{listener:04X}" not in await run(settings, command="cat /proc/net/tcp")


async def test_bash_network_shares_the_host_network(settings: Settings, listener: int) -> None:
    settings.tools.bash_network = True
    assert "CONNECTED" in await run(settings, command=CONNECT.format(port=listener))


# --- item 2: no capabilities, as root too ----------------------------------------------------


ESCAPE = """
grep CapEff /proc/self/status
d="$(printf %s {data_head})"'{data_tail}'
umount "$d"; cat "$d/server.json"
mount -o remount,rw / && echo REMOUNTED
touch {outside} && echo WROTE
echo end
"""


def escape_command(data_dir: Path, outside: Path) -> str:
    # Spelled so that the parsed checks cannot see the data dir's name (the sandbox must).
    data = str(data_dir)
    return ESCAPE.format(data_head=data[:-1], data_tail=data[-1], outside=outside)


async def test_the_sandbox_has_no_capabilities(settings: Settings) -> None:
    """As root bwrap kept them all: umount showed the hidden data dir and a remount made /
    writable (issue 29, item 2)."""
    outside = Path.home() / f".shiyi-escape-{os.getpid()}"
    try:
        out = await run(settings, command=escape_command(settings.data_dir, outside))
        assert "CapEff:\t0000000000000000" in out
        assert SECRET not in out
        assert "REMOUNTED" not in out and "WROTE" not in out
        assert not outside.exists()
        assert out.rstrip().endswith("end")
    finally:
        outside.unlink(missing_ok=True)


UNPRIVILEGED = """
import asyncio, sys
from pathlib import Path
from shiyi.config import load_settings
from shiyi.tools.base import ToolContext
from shiyi.tools.builtins.shell import bash

ws = Path(sys.argv[1])
settings = load_settings(cwd=ws, workspace=ws, home=ws / ".data")
settings.tools.bash_sandbox = "bwrap"
ctx = ToolContext.for_settings(settings)
print(asyncio.run(bash.invoke(bash.validate({"command": sys.argv[2]}), ctx)))
"""


@pytest.mark.skipif(not AS_ROOT, reason="switching to the unprivileged user needs root")
def test_the_sandbox_holds_for_an_unprivileged_user(tmp_path: Path) -> None:
    """The same escape as `nobody` (bwrap then makes a user namespace of its own)."""
    base = Path(tempfile.mkdtemp(prefix="shiyi-nobody-"))  # tmp_path is root's alone
    try:
        ws = base / "ws"
        (ws / ".data").mkdir(parents=True)
        (ws / ".data" / "server.json").write_text(SECRET)
        (ws / "sub").mkdir()
        (ws / "sub" / ".env").write_text(f"KEY={SECRET}\n")
        subprocess.run(["chown", "-R", "65534:65534", str(base)], check=True)
        base.chmod(0o755)
        outside = Path("/var/tmp") / f"shiyi-escape-{os.getpid()}"
        command = 'cat "$(printf %s sub/.en)""v"\n' + escape_command(ws / ".data", outside)
        env = {
            "PATH": os.environ["PATH"],
            "PYTHONPATH": os.pathsep.join(p for p in sys.path if p.startswith("/work")),
            "SHIYI_HOME": str(ws / ".data"),
            "XDG_CONFIG_HOME": str(base / "config"),
            "HOME": str(base),
        }
        done = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
             sys.executable, "-c", UNPRIVILEGED, str(ws), command],
            env=env, capture_output=True, text=True, timeout=60, cwd=ws,
        )  # fmt: skip
        if "cannot make a sandbox here" in done.stderr:
            pytest.skip(f"bwrap cannot run unprivileged here: {done.stderr[-300:]}")
        assert done.returncode == 0, done.stderr
        assert "CapEff:\t0000000000000000" in done.stdout
        assert SECRET not in done.stdout
        assert "REMOUNTED" not in done.stdout and "WROTE" not in done.stdout
        assert not outside.exists()
        assert done.stdout.rstrip().endswith("end")
    finally:
        subprocess.run(["rm", "-rf", str(base)], check=False)


# --- item 8: secrets below the workspace root ------------------------------------------------


@pytest.mark.parametrize(
    "relative", ["sub/.env", "a/b/c/.env.production", "sub/shiyi.yaml", "sub/.env.local"]
)
async def test_a_secret_below_the_workspace_root_reads_as_nothing(
    settings: Settings, workspace: Path, relative: str
) -> None:
    secret = workspace / relative
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text(f"KEY={SECRET}\n")
    folder, name = relative.rsplit("/", 1)
    hidden_name = f'"$(printf %s {folder}/{name[:3]})""{name[3:]}"'
    out = await run(settings, command=f"cat {hidden_name}; grep -r KEY . ; echo end")
    assert SECRET not in out
    assert out.rstrip().endswith("end")
    assert secret.read_text() == f"KEY={SECRET}\n"  # hidden, not changed


async def test_templates_and_skipped_trees_stay_readable(
    settings: Settings, workspace: Path
) -> None:
    (workspace / "sub").mkdir()
    (workspace / "sub" / ".env.example").write_text("KEY=changeme\n")
    out = await run(settings, command="cat sub/.env.example")
    assert "KEY=changeme" in out
    (workspace / "node_modules" / "pkg").mkdir(parents=True)
    (workspace / "node_modules" / "pkg" / ".env").write_text("x")
    (workspace / "sub" / ".env").write_text("y")
    assert workspace_secrets(workspace) == [workspace / "sub" / ".env"]


def test_the_scan_stops_at_its_limit(workspace: Path, caplog: pytest.LogCaptureFixture) -> None:
    for i in range(30):
        (workspace / f"d{i:02}").mkdir()
    (workspace / "zz").mkdir()
    (workspace / "zz" / ".env").write_text("x")
    assert workspace_secrets(workspace, limit=10) == []
    assert "more than 10 entries" in caplog.text


# --- item 8: process and memory limits ---------------------------------------------------------


FORK_BOMB = textwrap.dedent(
    """\
    python3 -c '
    import os
    while True:
        try:
            os.fork()
        except OSError:
            pass
    '"""
)


@pytest.mark.skipif(
    AS_ROOT and pids_cgroup_parent() is None, reason="root without a writable pids cgroup"
)
async def test_a_fork_bomb_stops_at_the_process_limit(settings: Settings) -> None:
    settings.tools.bash_max_processes = 40
    with pytest.raises(ToolError) as info:
        await run(settings, command=FORK_BOMB, timeout=4)
    message = str(info.value)
    assert "timed out" in message
    assert "limit of 40 processes (tools.bash_max_processes)" in message
    assert machine_still_forks()  # the bomb took only its 40
    assert run_cgroups_left() == []


def machine_still_forks() -> bool:
    return subprocess.run(["true"], check=False).returncode == 0


def run_cgroups_left() -> list[Path]:
    parent = pids_cgroup_parent()
    return sorted(parent.glob("shiyi-bash-*")) if parent is not None else []


async def test_a_huge_allocation_fails_at_the_memory_limit(settings: Settings) -> None:
    settings.tools.bash_memory_mb = 128
    out = await run(settings, command="python3 -c 'b = bytearray(1024 ** 3); print(\"GOT\")'")
    assert "GOT" not in out
    assert "MemoryError" in out
    assert "memory limit of 128 MB per process (tools.bash_memory_mb)" in out


# --- item 14: an interpreter under /tmp ----------------------------------------------------


@pytest.fixture
def venv_under_tmp() -> Iterator[Path]:
    """A real virtualenv in the real /tmp (tmp_path is there too, but made per test)."""
    venv = Path(tempfile.mkdtemp(prefix="shiyi-venv-", dir="/tmp"))
    try:
        created = subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(venv)],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert created.returncode == 0, created.stderr
        yield venv
    finally:
        subprocess.run(["rm", "-rf", str(venv)], check=False)


async def test_a_virtualenv_under_tmp_runs_in_the_sandbox(
    settings: Settings, venv_under_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sandbox's private /tmp hid an interpreter living in the real one."""
    monkeypatch.setenv("PATH", f"{venv_under_tmp / 'bin'}{os.pathsep}{os.environ['PATH']}")
    out = await run(settings, command="python -c 'import sys; print(sys.prefix)'")
    assert out.splitlines() == ["exit code: 0", str(venv_under_tmp)]


async def test_the_private_tmp_still_hides_the_rest_of_tmp(
    settings: Settings, tmp_path: Path
) -> None:
    (tmp_path / "other.txt").write_text(SECRET)
    out = await run(settings, command=f"cat {tmp_path}/other.txt; ls /tmp; echo end")
    assert SECRET not in out
