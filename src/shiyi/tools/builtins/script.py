"""``scripts``: the agent saves scripts it wrote, finds them again, runs and deletes them.

The library lives in the data directory, which the file tools and bash may not touch; this
tool is the only way in, and it takes names, never paths.  Running a script is running
code, so it goes the way of a ``bash`` command: the same parsed checks and deny rules on a
shell script's text, the same sandbox, timeout and environment, and only where ``bash``
itself is allowed.  The body is handed to the interpreter as its program text
(``bash -c BODY NAME ARGS...``), so the sandbox never needs to see the data directory.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
from typing import Literal

from shiyi.config.settings import ToolSettings
from shiyi.errors import ShiyiError, ToolError
from shiyi.memory.service import Memory
from shiyi.scripts.library import (
    Language,
    Script,
    ScriptLibrary,
    ScriptParameter,
    forget_script,
    forgotten_text,
    remember_script,
    saver,
)
from shiyi.tools.base import FunctionTool, Tool, ToolContext, parse_docstring
from shiyi.tools.builtins.bash_checks import check_command, check_rules
from shiyi.tools.builtins.sandbox import sandbox_binary
from shiyi.tools.builtins.shell import TOOL_TIMEOUT, Outcome, describe_outcome, run_confined

MAX_ARGUMENT_BYTES = 16 * 1024
_SHELLS = {"bash": "/bin/bash", "sh": "/bin/sh"}
Action = Literal["save", "list", "search", "show", "run", "delete"]


# --- running ----------------------------------------------------------------------------


def check_run(script: Script, args: list[str], ctx: ToolContext) -> None:
    """Raise :class:`ToolError` unless ``script`` may run with ``args`` as a bash command
    would: a shell script's text passes the parsed checks and the deny rules, a Python
    script's text the deny rules; the arguments are checked as words of a command line."""
    required = [p for p in script.parameters if p.required]
    if len(args) < len(required):
        missing = ", ".join(p.name for p in required[len(args) :])
        raise ToolError(
            f"script {script.name} needs {missing}: pass args in order (usage: {script.usage()})."
        )
    if sum(len(a.encode("utf-8")) for a in args) > MAX_ARGUMENT_BYTES or any(
        "\0" in a for a in args
    ):
        raise ToolError(f"the arguments exceed {MAX_ARGUMENT_BYTES} bytes or hold NUL bytes.")
    settings = ctx.settings
    expand = sandbox_binary(settings.bash_sandbox) is None
    if script.language in _SHELLS:
        check_command(script.body, ctx.workspace, settings.bash_deny, expand_globs=expand)
    else:
        check_rules(script.body, settings.bash_deny)
    if args:
        # `true ARGS`: no command of its own, so only the arguments' paths and text count.
        line = shlex.join(["true", *args])
        check_command(line, ctx.workspace, settings.bash_deny, expand_globs=expand)


def interpreter_argv(script: Script, args: list[str]) -> list[str]:
    """The program that runs ``script``: its interpreter with the body as program text."""
    shell = _SHELLS.get(script.language)
    if shell is not None:
        return [shell, "-c", script.body, script.name, *args]
    python = shutil.which("python3", path=os.environ.get("PATH"))
    if python is None:
        raise ToolError("python3 is not on PATH, so Python scripts cannot run here.")
    return [python, "-c", script.body, *args]


async def run_script(
    script: Script,
    args: list[str],
    ctx: ToolContext,
    timeout: float | None = None,  # noqa: ASYNC109 - bash's limit, passed on
) -> Outcome:
    """Check, then run ``script`` in the workspace the way ``bash`` runs a command."""
    check_run(script, args, ctx)
    return await run_confined(interpreter_argv(script, args), ctx, timeout)


# --- the tool -----------------------------------------------------------------------------


def script_line(script: Script) -> str:
    return f"{script.usage()} ({script.language}) — {script.description}"


def show_text(script: Script) -> str:
    params = [
        f"  {p.name}{'' if p.required else ' (optional)'}"
        + (f": {p.description}" if p.description else "")
        for p in script.parameters
    ]
    return "\n".join(
        [
            f"script {script.name} ({script.language}): {script.description}",
            f"usage: {script.usage()}",
            *(["parameters:", *params] if params else []),
            "body:",
            script.body.rstrip("\n"),
        ]
    )


class _Scripts:
    """The actions of one agent's ``scripts`` tool."""

    def __init__(self, library: ScriptLibrary, memory: Memory | None, can_run: bool) -> None:
        self.library = library
        self.memory = memory
        self.can_run = can_run

    async def save(
        self,
        name: str,
        description: str,
        language: Language,
        body: str,
        parameters: list[ScriptParameter],
    ) -> str:
        memory = self.memory
        script = Script(name, description.strip(), language, body, list(parameters))
        script.saved_by = saver(memory.viewer) if memory is not None else ""
        _, replaced = await asyncio.to_thread(self.library.save, script)
        note = ""
        if memory is not None:
            if replaced is not None and replaced.saved_by != script.saved_by:
                # Its procedure is another saver's memory, which would still point at it.
                await asyncio.to_thread(forget_script, memory, replaced.name)
            fact = await asyncio.to_thread(remember_script, memory, script)
            note = f" Remembered as procedure {fact.id}."
        verb = "Replaced" if replaced is not None else "Saved"
        return f"{verb} script {script_line(script)}.{note}"

    async def listing(self) -> str:
        scripts = await asyncio.to_thread(self.library.list_all)
        if not scripts:
            return "No saved scripts yet; save one with action 'save'."
        return "\n".join(script_line(s) for s in scripts)

    async def search(self, query: str) -> str:
        if not query.strip():
            raise ToolError("pass query: words saying what the script should do.")
        found = await asyncio.to_thread(self.library.search, query)
        if not found:
            return f"No saved script matches {query!r}; action 'list' shows them all."
        return "\n".join(script_line(s) for s in found)

    async def show(self, name: str) -> str:
        return show_text(await asyncio.to_thread(self.library.get, name))

    async def run(
        self,
        name: str,
        args: list[str],
        ctx: ToolContext,
        timeout: float | None,  # noqa: ASYNC109 - bash's limit, passed on
    ) -> str:
        if not self.can_run:
            raise ToolError(
                "running scripts is not allowed here: it runs code, which needs the bash "
                "tool, and bash is not among this agent's tools. Show the script instead."
            )
        script = await asyncio.to_thread(self.library.get, name)
        outcome = await run_script(script, args, ctx, timeout)
        return f"ran script {script.usage()}\n{describe_outcome(outcome)}"

    async def delete(self, name: str) -> str:
        await asyncio.to_thread(self.library.delete, name)
        forgotten = 0
        if self.memory is not None:
            forgotten = await asyncio.to_thread(forget_script, self.memory, name)
        return f"Deleted script {name} and forgot {forgotten_text(forgotten)} of it."


def script_tools(
    library: ScriptLibrary,
    memory: Memory | None,
    settings: ToolSettings,
    *,
    can_run: bool,
) -> list[Tool]:
    """The ``scripts`` tool over ``library``, remembering saved scripts in ``memory``;
    ``can_run``: whether the agent may run them (it may run bash)."""
    actions = _Scripts(library, memory, can_run)

    async def scripts(
        action: Action,
        ctx: ToolContext,
        name: str = "",
        description: str = "",
        language: Language = "bash",
        body: str = "",
        parameters: list[ScriptParameter] | None = None,
        query: str = "",
        args: list[str] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - the model's name, as for bash
    ) -> str:
        """Keep reusable scripts: save one you wrote, list or search the saved ones, show,
        run or delete one. A saved script is remembered as a procedure, so query_memory
        finds it too.

        Args:
            action: save, list, search, show, run or delete.
            name: The script's name (save, show, run, delete): lower-case letters, digits,
                '-' and '_', like deploy or backup-db.
            description: save: what it does and when to use it.
            language: save: bash, sh or python.
            body: save: the script's code.
            parameters: save: its positional parameters in order, each with name,
                description and required (optional ones last).
            query: search: words saying what the script should do.
            args: run: the arguments, in the order of the parameters.
            timeout: run: seconds before it is killed (default and maximum as for bash).
        """
        try:
            if action == "save":
                return await actions.save(name, description, language, body, parameters or [])
            if action == "list":
                return await actions.listing()
            if action == "search":
                return await actions.search(query)
            if action == "show":
                return await actions.show(name)
            if action == "run":
                return await actions.run(name, list(args or []), ctx, timeout)
            return await actions.delete(name)
        except ToolError:
            raise
        except ShiyiError as exc:  # a bad name, a missing script: the model can fix it
            raise ToolError(str(exc)) from exc

    needed = max(settings.bash_max_timeout + 60.0, TOOL_TIMEOUT)
    run_note = "" if can_run else " Running scripts is not allowed for this agent."
    description = parse_docstring(scripts.__doc__)[0] + run_note
    return [
        FunctionTool(
            scripts, name="scripts", description=description, sequential=True, timeout=needed
        )
    ]
