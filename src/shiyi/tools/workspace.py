"""The workspace sandbox: every path a file tool touches is resolved here first."""

from __future__ import annotations

from pathlib import Path

from shiyi.errors import WorkspaceViolation


class Workspace:
    """A root directory that file tools may not leave (unless ``allow_outside``)."""

    def __init__(self, root: Path, *, allow_outside: bool = False) -> None:
        self.root = root.expanduser().resolve()
        self.allow_outside = allow_outside

    def resolve(self, path: str | Path) -> Path:
        """Resolve ``path`` (relative to the root) following symlinks; refuse escapes.

        The check runs on the fully resolved path, so ``..`` segments, absolute paths and
        symlinks pointing outside the workspace are all refused the same way.
        """
        raw = Path(path).expanduser()
        candidate = raw if raw.is_absolute() else self.root / raw
        resolved = candidate.resolve()
        if self.allow_outside or resolved == self.root or resolved.is_relative_to(self.root):
            return resolved
        reason = "is a symlink that leads" if _has_symlink(candidate, self.root) else "is"
        raise WorkspaceViolation(
            f"path {str(path)!r} {reason} outside the workspace {self.root}; "
            "use a path inside the workspace (or set tools.allow_outside_workspace: true)."
        )

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
