"""Writing output files so that nothing is lost: every file goes to a temporary file next to its
destination and is moved into place (``os.replace``, atomic on one file system) only once it is
complete, so a crash or a full disk never leaves half a file or destroys the previous one."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def replace_when_done(path: str | Path) -> Iterator[Path]:
    """A temporary path next to ``path`` to write to; moved onto ``path`` when the block ends
    without an exception, removed otherwise. The folder is created if needed."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=f"{p.suffix}.tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private; an output is an ordinary file
        os.replace(tmp, p)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (``replace_when_done``); returns the path."""
    with replace_when_done(path) as tmp:
        tmp.write_text(text)
    return Path(path)


def new_output_dir(parent: str | Path, name: str | None = None) -> Path:
    """Create and return a new, empty folder ``parent/name`` (default name: the local date and
    time, ``YYYYmmdd-HHMMSS``), created exclusively: when that folder exists already (another run
    started in the same second), ``name-2``, ``name-3``, ... is taken instead, so two runs never
    share a folder. OSError when ``parent`` cannot be written."""
    import time

    base = Path(parent)
    base.mkdir(parents=True, exist_ok=True)
    stem = name if name is not None else time.strftime("%Y%m%d-%H%M%S")
    for k in range(1, 10_000):
        path = base / (stem if k == 1 else f"{stem}-{k}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"no free folder name {stem}-N in {base}")


def check_output_file(path: str | Path, flag: str, example: str) -> Path:
    """An output file named on a command line (``flag``, e.g. ``--html``) that can be written
    later: not a folder, inside a folder that exists and is writable or can be created (an
    existing file is replaced; missing folders are created when it is written). ValueError
    naming the flag otherwise; nothing is created."""
    p = Path(path)
    if p.is_dir() or not p.name:
        raise ValueError(f"{flag} {str(path)!r} is a folder; give a file name, e.g. {flag} {example}")
    folder = p.parent
    while not folder.exists() and folder != folder.parent:  # the nearest folder that exists
        folder = folder.parent
    if not folder.is_dir():
        raise ValueError(f"{flag} {str(path)!r}: {str(folder)!r} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"{flag} {str(path)!r}: cannot write in {str(folder)!r}")
    return p
