"""Control sequences in stored text reach the terminal as text, never as commands."""

from __future__ import annotations

from tests.interfaces.cli.conftest import Cli

HOSTILE = "x \x1b]52;c;ZWNobyBwd25lZA==\x07 \x1b]8;;http://evil/\x07LINK\x1b]8;;\x07 \x1b[2J \x9b2J"


def obeyable(text: str) -> bool:
    """Whether a terminal would act on anything in ``text`` beyond colours."""
    return any(s in text for s in ("\x1b]", "\x1b[2J", "\x07", "\x9b"))


def test_memories_documents_and_scripts_are_printed_as_text(cli: Cli) -> None:
    cli.config("memory:\n  embedder: none\n")
    added = cli.run("memory", "add", HOSTILE)
    assert added.returncode == 0, added.stderr
    listed = cli.run("memory", "list")
    found = cli.run("memory", "search", "LINK", "--mode", "keyword")
    for out in (added.stdout, listed.stdout, found.stdout):
        assert "LINK" in out and not obeyable(out), out
        assert "\\x1b]52;c;ZWNobyBwd25lZA==\\x07" in out  # shown, so the user sees it
    (cli.workspace / "page.md").write_text(f"# Notes\n\nThe {HOSTILE} ferry leaves at nine.\n")
    assert cli.run("kb", "add", "page.md").returncode == 0
    passage = cli.run("kb", "search", "ferry leaves", "--no-expand").stdout
    assert "ferry" in passage and not obeyable(passage)


def test_a_models_reply_is_shown_as_text_in_the_terminal_ui() -> None:
    import io

    from rich.console import Console

    from shiyi.events import TextDelta
    from shiyi.interfaces.cli.render import EventPrinter
    from shiyi.interfaces.cli.tui_layout import body
    from shiyi.interfaces.cli.tui_state import TurnState

    state = TurnState()
    state.handle(TextDelta(text=f"Here you go: {HOSTILE}"))
    screen = io.StringIO()
    Console(file=screen, force_terminal=True, width=200).print(*body(state, 200))
    assert "LINK" in screen.getvalue() and not obeyable(screen.getvalue())
    plain = io.StringIO()  # `shiyi chat --plain` and `shiyi run`
    EventPrinter(plain, color=True).handle(TextDelta(text=HOSTILE))
    assert "LINK" in plain.getvalue() and not obeyable(plain.getvalue())
