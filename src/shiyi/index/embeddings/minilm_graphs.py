"""The ONNX graphs of all-MiniLM-L6-v2, float or int8, built once and cached on disk.

Building the float graph from ``model.safetensors`` takes ~1.5 s and quantizing it another
~1 s, on every process start.  Both are pure functions of the weights, of the graph builder
and of the quantizer, so the result is kept in the cache dir under a name holding a hash of
all three: new weights, a changed builder (:data:`GRAPH_VERSION`) or another onnxruntime
(its quantizer) name another file, and a stale file is never read.  A damaged cache file is
rebuilt, never fatal.

The int8 graph is ``onnxruntime.quantization.quantize_dynamic`` of the float one: weights of
the MatMul and fused Attention nodes int8 per output channel, activations quantized per
batch at run time.  Per channel matters: per tensor, cosine to the float vectors was 0.958 on
average over LoCoMo turns; per channel 0.992 (``bench/import_bench.py`` measures it).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TypeAlias

log = logging.getLogger(__name__)

Variant: TypeAlias = Literal["float", "int8", "int8-ffn", "int8-nodown"]
GRAPH_VERSION = "2"
"""Bump when :func:`.minilm_onnx.build_model` changes the graph it writes."""
QUANTIZED_OPS = ["MatMul", "Attention"]
LAYERS = range(6)
ROLES = ("attention", "attn_out", "ffn_up", "ffn_down")
"""The named nodes of each encoder layer a variant may quantize (``{role}_{layer}``)."""
QUANTIZED_ROLES: dict[Variant, tuple[str, ...]] = {
    "float": (),
    "int8": ROLES,
    "int8-ffn": ("ffn_up",),
    "int8-nodown": ("attention", "attn_out", "ffn_up"),
}
"""Which nodes each variant quantizes.  The error is not spread evenly: the FFN's down
projection reads the GELU output, whose few large channels one per-run activation scale
fits badly, and the attention's softmax inputs are sensitive.  Measured on 300 dev turns
(cosine to float; sentences/s at batch 1 beside float at batch 16, busy 2-core machine):
all 0.9928 and 4.6x, no down projection 0.9964 and 3.8x, FFN up only 0.9976 and 2.8x."""


def weights_digest(folder: Path) -> str:
    """The weights file's identity: resolved path, size and modification time (a reinstalled
    package writes a new file, so new weights get new graphs).  Not a hash of the bytes:
    hashing the 90 MB file cost every process start ~0.2 s, more than the cache saved on a
    busy machine's CLI start."""
    weights = (folder / "model.safetensors").resolve()
    stat = weights.stat()
    return f"{weights}|{stat.st_size}|{stat.st_mtime_ns}"


def graph_path(folder: Path, variant: Variant, cache: Path) -> Path:
    """Where ``variant``'s graph for the weights in ``folder`` is cached."""
    import onnxruntime

    key = f"{weights_digest(folder)}|{GRAPH_VERSION}|{variant}|{onnxruntime.__version__}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return cache / f"all-MiniLM-L6-v2-{variant}-{digest}.onnx"


def model_graph(
    folder: Path, variant: Variant, cache: Path | None, build: Callable[[Path], bytes]
) -> bytes:
    """The serialised graph, from ``cache`` when it holds it (``None``: build every time);
    ``build`` writes the float graph of the weights in a folder
    (:func:`.minilm_onnx.float_graph`)."""
    path = graph_path(folder, variant, cache) if cache is not None else None
    if path is not None and path.is_file():
        data = path.read_bytes()
        if _loadable(data):
            return data
        log.warning("rebuilding the damaged cached embedding graph %s", path)
    graph = build(folder)
    data = graph if variant == "float" else quantize(graph, QUANTIZED_ROLES[variant])
    if path is not None:
        _write_atomically(path, data)
    return data


def _loadable(data: bytes) -> bool:
    import onnx

    try:
        onnx.load_model_from_string(data)
    except Exception:  # protobuf's DecodeError and friends: a truncated or foreign file
        return False
    return True


def quantize(graph: bytes, roles: tuple[str, ...] = ROLES) -> bytes:
    """``graph`` with int8 weights (dynamic quantization, per channel) in the nodes of
    ``roles``; the others stay float."""
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="shiyi-quantize-") as tmp:
        source, target = Path(tmp) / "float.onnx", Path(tmp) / "int8.onnx"
        source.write_bytes(graph)
        quantize_dynamic(
            source,
            target,
            op_types_to_quantize=QUANTIZED_OPS,
            nodes_to_quantize=[f"{role}_{layer}" for role in roles for layer in LAYERS],
            per_channel=True,
            weight_type=QuantType.QInt8,
            # The fused com.microsoft nodes defeat ONNX shape inference: say the type.
            extra_options={"DefaultTensorType": TensorProto.FLOAT},
        )
        return target.read_bytes()


def _write_atomically(path: Path, data: bytes) -> None:
    """Two processes may build at once: each writes its own file and the last rename wins
    with identical bytes.  A read-only cache dir only costs the build next time."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        partial.write_bytes(data)
        partial.replace(path)
    except OSError as exc:
        log.warning("could not cache the embedding graph at %s: %s", path, exc)
        partial.unlink(missing_ok=True)
