"""Every module-level regular expression in shiyi runs in linear time (issue 29).

A pattern that may begin a match inside a run of its own characters, scan to the run's end
and fail, costs the run's length squared: ``_EMAIL`` and ``_PATH`` took 15.7 s on one 16k
character token and a 120k-character base64 blob stalled memory for every user.  Here each
pattern (found by importing every shiyi module) scans long runs of every character class;
at ``SIZE`` characters a linear pattern needs milliseconds and a quadratic one seconds to
minutes, so the whole sweep runs in a child process under a deadline two orders of magnitude
above its normal time (a hang detector, not a speed target: bench/regex_linear_bench.py
prints the numbers).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

SIZE = 8_000
DEADLINE = 120.0

EXEMPT = {
    # Only ever .fullmatch()-ed against one token, which is linear (no second start).
    "shiyi.memory.text.topics._GERUND",
}

SWEEP = textwrap.dedent(
    """
    import base64, importlib, pkgutil, random, re, sys, time
    import shiyi

    SIZE, EXEMPT = int(sys.argv[1]), set(sys.argv[2].split(","))
    UNITS = [
        "a", "A", "1", "_", ".", "-", "+", "@", "/", "~", "#", ":", "`", "(", "'", " ", "\\t",
        "\\n", "a.", "a-", "a_", "a@", "a/", "-/", "//-/", "~-/", "a1", "aA", "Aa", "A.", "A ",
        "A_", "1.", "1 ", "a(", "#a", "@a", "a ", "in ", "the ", "x,", "汉", "昨天", "é",
        ", ", "in may ", "what has ", "1 day ", "a (", "( ", " )", "- ", "x: ", "{a", "def ",
    ]
    rng = random.Random(29)
    blob = base64.b64encode(rng.randbytes(SIZE)).decode()[:SIZE]
    texts = [(u * (SIZE // len(u) + 1))[:SIZE] for u in UNITS]
    texts += [t[:-1] + end for t in texts[:] for end in ("é", "(", "@", "!")]
    texts += ["# a" + t[3:] for t in texts[: len(UNITS)]]  # anchored ones: a heading line
    texts += [blob, blob[: SIZE // 2] + "@" + blob[SIZE // 2 :], blob.replace("+", "/")]
    seen = set()
    for info in pkgutil.walk_packages(shiyi.__path__, "shiyi."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in sorted(vars(module).items()):
            where = f"{module.__name__}.{name}"
            if not isinstance(value, re.Pattern) or id(value) in seen or where in EXEMPT:
                continue
            if isinstance(value.pattern, bytes):  # source code bytes (repomap): one class
                continue
            seen.add(id(value))
            began = time.perf_counter()
            for text in texts:
                for _ in value.finditer(text):
                    pass
            print(f"{time.perf_counter() - began:.3f}", where, flush=True)
    print("checked", len(seen), "patterns", flush=True)
    """
)


def test_every_module_pattern_is_linear_on_long_runs() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", SWEEP, str(SIZE), ",".join(sorted(EXEMPT))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = child.communicate(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
        timed = sorted((line.split() for line in out.splitlines()), key=lambda t: -float(t[0]))
        raise AssertionError(f"super-linear patterns (slowest first, s): {timed[:5]}") from None
    assert child.returncode == 0, err
    checked = int(out.strip().splitlines()[-1].split()[1])
    assert checked > 60  # the sweep found the modules' patterns (69 at the time of writing)
