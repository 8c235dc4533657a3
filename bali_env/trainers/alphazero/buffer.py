"""The replay buffer: every generation's self-play rows in a file, the last ``window`` trained on.

A generation's rows (``selfplay``'s table, a ``records.Rows``) are written once, as ``buffer/gen_NNNN.npz`` in the
run's folder (to a temporary file, moved into place), while the generation plays they are kept
chunk by chunk in ``buffer/gen_NNNN/`` so an interrupted generation goes on from its last chunk.
``window`` reads the rows the learner trains on: those of the generations ``g - window + 1 .. g``.
Files older than the window are removed once a generation is done (``prune``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from bali_env.files import replace_when_done
from bali_env.trainers.alphazero.jobs import Rows

FOLDER = "buffer"  #: the buffer's folder in a run


def generation_file(run: Path, generation: int) -> Path:
    """Where generation ``generation``'s rows are kept."""
    return run / FOLDER / f"gen_{generation:04d}.npz"


def chunk_file(run: Path, generation: int, chunk: int) -> Path:
    """Where one chunk of a generation still playing is kept."""
    return run / FOLDER / f"gen_{generation:04d}" / f"chunk_{chunk:04d}.npz"


def save(path: Path, rows: Rows) -> None:
    """Write ``rows`` to ``path`` (a temporary file moved into place), its arrays by name in
    ``records.ROW_NAMES``' order."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with replace_when_done(path) as tmp, open(tmp, "wb") as f:
        np.savez(f, **rows.arrays())


def load(path: Path) -> Rows:
    """The rows ``save`` wrote."""
    with np.load(path, allow_pickle=False) as data:
        return Rows.from_arrays({name: data[name] for name in data.files})


def finish_generation(run: Path, generation: int, rows: Rows) -> None:
    """Keep generation ``generation``'s rows as one file and drop its chunks."""
    save(generation_file(run, generation), rows)
    shutil.rmtree(run / FOLDER / f"gen_{generation:04d}", ignore_errors=True)


def window(run: Path, generation: int, size: int) -> Rows:
    """The rows of generations ``generation - size + 1 .. generation`` (those that exist), oldest first."""
    parts = [load(generation_file(run, g)) for g in range(max(1, generation - size + 1), generation + 1)
             if generation_file(run, g).is_file()]
    if not parts:
        raise FileNotFoundError(f"no replay buffer rows up to generation {generation} in {run / FOLDER}")
    return Rows.concat(parts)


def prune(run: Path, generation: int, size: int) -> None:
    """Remove the files of generations the next window no longer reads (older than ``generation - size + 2``)."""
    for path in sorted((run / FOLDER).glob("gen_*.npz")):
        if int(path.stem.split("_")[1]) < generation - size + 2:
            path.unlink()


__all__ = ["FOLDER", "chunk_file", "finish_generation", "generation_file", "load", "prune", "save", "window"]
