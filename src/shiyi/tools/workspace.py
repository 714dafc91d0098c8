"""The workspace sandbox: every path a file tool touches is resolved here first."""

from __future__ import annotations

from pathlib import Path

from shiyi.errors import ProtectedPath, WorkspaceViolation
from shiyi.tools.code_paths import CODE_ADVICE
from shiyi.tools.protection import ADVICE, Protection, protection


class Workspace:
    """A root directory that file tools may not leave (unless ``allow_outside``), holding
    nothing they may touch that ``protected`` protects (default: the user config dir,
    ``SHIYI_CONFIG``'s file, any ``shiyi.yaml`` and ``.env``), even with ``allow_outside``."""

    def __init__(
        self, root: Path, *, allow_outside: bool = False, protected: Protection | None = None
    ) -> None:
        self.root = root.expanduser().resolve()
        self.allow_outside = allow_outside
        self.protected = protected if protected is not None else protection()

    def resolve(self, path: str | Path, *, write: bool = False) -> Path:
        """Resolve ``path`` (relative to the root) following symlinks; refuse escapes and
        protected paths (with ``write``, code locations too: see :mod:`..code_paths`).

        The check runs on the fully resolved path, so ``..`` segments, absolute paths and
        symlinks pointing outside the workspace (or at a protected file) are all refused.
        """
        raw = Path(path).expanduser()
        candidate = raw if raw.is_absolute() else self.root / raw
        resolved = candidate.resolve()
        self.check_protected(resolved, shown=str(path), via=candidate)
        if write:
            self.check_code(resolved, shown=str(path), via=candidate)
        if self.allow_outside or resolved == self.root or resolved.is_relative_to(self.root):
            return resolved
        reason = "is a symlink that leads" if _has_symlink(candidate, self.root) else "is"
        raise WorkspaceViolation(
            f"path {str(path)!r} {reason} outside the workspace {self.root}; "
            "use a path inside the workspace (or set tools.allow_outside_workspace: true)."
        )

    def check_protected(self, resolved: Path, *, shown: str, via: Path | None = None) -> None:
        """Raise :class:`ProtectedPath` when ``resolved`` is protected."""
        why = self.protected.reason(resolved)
        if why is None and via is not None and via != resolved:
            why = self.protected.reason(via)  # the link's own name (a link called .env)
        if why is None:
            return
        link = f" (it leads to {resolved})" if via is not None and via != resolved else ""
        raise ProtectedPath(
            f"{shown!r} is protected{link}: {why}; {ADVICE}. "
            "Ask the user to make this change themselves."
        )

    def check_code(self, resolved: Path, *, shown: str, via: Path | None = None) -> None:
        """Raise :class:`ProtectedPath` when changing ``resolved`` (or the link ``via``
        leading to it) could plant code that runs at the next start."""
        why = self.protected.code_reason(resolved)
        if why is None and via is not None and via != resolved:
            why = self.protected.code_reason(via.absolute())
        if why is None:
            return
        link = f" (it leads to {resolved})" if via is not None and via != resolved else ""
        raise ProtectedPath(f"{shown!r} may not be changed{link}: {why}; {CODE_ADVICE}.")

    def is_protected(self, path: Path) -> bool:
        """Whether a walk (list_dir, grep) must leave ``path`` out: it, or where it leads.

        ``path`` is an entry of a resolved directory, so only the entry itself can be a link
        (resolving every file of a large tree would cost a grep dearly)."""
        reason = self.protected.reason
        if reason(path) is not None:
            return True
        return path.is_symlink() and reason(path.resolve()) is not None

    def display(self, path: Path) -> str:
        """A path as the model should see it: relative to the root when inside."""
        try:
            return str(path.relative_to(self.root)) or "."
        except ValueError:
            return str(path)


def _has_symlink(path: Path, root: Path) -> bool:
    current = path
    while current != current.parent:
        if current.is_symlink():
            return True
        if current == root:
            return False
        current = current.parent
    return False
