"""Load llama.cpp's CPU backend for this machine, once per process, before any model.

``scripts/install.sh`` builds llama.cpp with ``GGML_BACKEND_DL``: the CPU code is a set of
``libggml-cpu-<variant>.so`` files, one per x86 feature level (x64, haswell = AVX2/FMA,
skylakex = AVX-512, ...), so one build runs everywhere at the best speed the CPU allows
(``bench/bench_local_model.py`` measures it against the single baseline build).  Each
variant scores the CPU it runs on, as ggml's own loader asks it, and the best is loaded,
except the AMX one: on these Firecracker VMs the CPU reports AMX and the kernel grants it,
yet the first ``tilezero`` in a worker thread is an illegal instruction (seen in gdb; it was
the old "native build crashes in decode").  ``SHIYI_LLAMA_CPU=<variant>`` picks one by hand.

llama-cpp-python does not load them itself, and llama.cpp's own fallback searches the
Python executable's folder and the *current directory*, which is the agent's workspace: a
library the model wrote there would be loaded.  So the search is done here, in the package's
own folders, before llama.cpp's fallback can run (it runs only when nothing is
loaded).  A build without variants (one ``libggml-cpu.so``, linked in) needs nothing.
"""

from __future__ import annotations

import _ctypes
import ctypes
import logging
import os
import threading
from pathlib import Path

from shiyi.errors import ModelUnavailable

BUILT_IN = "built-in"
VARIANT_ENV = "SHIYI_LLAMA_CPU"
_AMX = frozenset({"sapphirerapids"})
_lock = threading.Lock()
_variant: str | None = None


def lib_dirs() -> tuple[Path, Path]:
    """``(llama-cpp-python's lib folder, the folder its CPU variants are installed in)``.

    llama.cpp installs the variants as runtime modules under ``bin/``, which the wheel puts
    beside the ``llama_cpp`` package, not inside it.
    """
    import llama_cpp

    package = Path(llama_cpp.__file__).parent
    lib = package / "lib"
    for folder in (lib, package.parent / "bin"):
        if any(folder.glob("libggml-cpu-*.so")):
            return lib, folder
    return lib, lib


def load_cpu_backend() -> str:
    """Load the best CPU variant (once); its name, or ``"built-in"`` for a plain build."""
    global _variant
    with _lock:
        if _variant is None:
            _variant = _load(*lib_dirs())
        return _variant


def _load(lib: Path, folder: Path) -> str:
    variants = {_variant_name(path): path for path in folder.glob("libggml-cpu-*.so")}
    if not variants:
        return BUILT_IN
    # llama-cpp-python's log callback prints ggml's info lines ("load_backend: loaded CPU
    # backend from ...") unless its logger says otherwise; Llama(verbose=False) sets it later.
    logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)
    chosen = os.environ.get(VARIANT_ENV) or _best(variants)
    if chosen not in variants:
        raise ModelUnavailable(
            f"{VARIANT_ENV}={chosen} names no llama.cpp CPU variant in {folder}; choose one of "
            f"{', '.join(sorted(variants))}, or unset it."
        )
    ggml = ctypes.CDLL(str(_linked_ggml(lib)))
    ggml.ggml_backend_load.restype = ctypes.c_void_p
    ggml.ggml_backend_load.argtypes = [ctypes.c_char_p]
    if not ggml.ggml_backend_load(str(variants[chosen]).encode()):
        raise ModelUnavailable(
            f"llama.cpp could not load its CPU backend {variants[chosen]}. Rebuild it with "
            "`bash scripts/install.sh`."
        )
    return chosen


def _best(variants: dict[str, Path]) -> str:
    """The variant scoring highest on this CPU, AMX ones left out (see the module doc)."""
    scores = {name: _score(path) for name, path in variants.items() if name not in _AMX}
    best = max(scores, key=lambda name: scores[name], default=None)
    if best is None or scores[best] <= 0:
        raise ModelUnavailable(
            f"No llama.cpp CPU backend in {next(iter(variants.values())).parent} runs on this "
            "CPU. Rebuild llama-cpp-python with `bash scripts/install.sh`."
        )
    return best


def _score(path: Path) -> int:
    """The variant's own verdict on this CPU (0: it cannot run here), as ggml asks it."""
    library = ctypes.CDLL(str(path))
    try:
        score = library.ggml_backend_score
        score.restype = ctypes.c_int
        return int(score())
    except AttributeError:
        return 0
    finally:
        _ctypes.dlclose(library._handle)  # as ggml does: only the chosen one stays


def _variant_name(path: Path) -> str:
    return path.name.removeprefix("libggml-cpu-").removesuffix(".so")


def _linked_ggml(lib: Path) -> Path:
    """The libggml file libllama was linked against (already loaded with llama_cpp).

    The wheel holds ``libggml.so`` and ``libggml.so.0`` as two copies, not a link, so
    opening the other one would load a second ggml with its own, empty backend registry.
    """
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:  # not Linux
        maps = ""
    for line in maps.splitlines():
        path = Path(line.split()[-1])
        if path.parent == lib and path.name.startswith("libggml.so"):
            return path
    return lib / "libggml.so.0"
