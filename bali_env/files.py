"""Writing output files so that nothing is lost: every file goes to a temporary file next to its
destination and is moved into place (``os.replace``, atomic on one file system) only once it is
complete, so a crash or a full disk never leaves half a file or destroys the previous one.

Output folders follow one rule in every command that writes one (``check_out_folder``): without
``--out`` a new folder (``new_output_dir``); a folder holding a finished run is never replaced
without ``--overwrite``, an unfinished one is continued with ``--resume OUT``. A run holds its
folder with ``lock_folder`` (a lock on the folder itself: no lock file left behind)."""

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
    _check_writable(p.parent, f"{flag} {str(path)!r}")
    return p


def _check_writable(path: Path, named: str) -> None:
    """ValueError starting with ``named`` unless the nearest folder of ``path`` that exists (itself
    included) is a folder this process can write in."""
    folder = path
    while not folder.exists() and folder != folder.parent:  # the nearest folder that exists
        folder = folder.parent
    if not folder.is_dir():
        raise ValueError(f"{named}: {str(folder)!r} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"{named}: cannot write in {str(folder)!r}")


def folder_in_use(path: str | Path) -> bool:
    """Whether a run holds ``lock_folder`` on the folder ``path`` now (False when it is not a
    folder); nothing is created."""
    try:
        with lock_folder(path, create=False):
            return False
    except BlockingIOError:
        return True
    except OSError:
        return False


@contextmanager
def lock_folder(path: str | Path, *, create: bool = True) -> Iterator[Path]:
    """Within the block this process alone holds the folder ``path`` (created first with
    ``create``): an exclusive ``flock`` on the folder itself, so no lock file is left in it
    (released when the block ends or the process dies). BlockingIOError when another process
    holds it."""
    import fcntl

    p = Path(path)
    if create:
        p.mkdir(parents=True, exist_ok=True)
    fd = os.open(p, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError when held elsewhere
        try:
            yield p
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def check_out_folder(out: str | Path | None, *, what: str, outputs: tuple[str, ...], finished: str,
                     resumable: tuple[str, ...] = (), resume: bool = False, overwrite: bool = False) -> None:
    """The one rule for ``--out OUT`` in every command that writes an output folder (``bali
    tournament``, ``bali league``, ``bali train``, ``bali exploit``, ``bali bench``), checked
    before anything is played, printed or created; ValueError naming the flag to give otherwise:

    - without ``--out`` (``out`` None) the command makes a new folder (``new_output_dir``),
      never an existing one: nothing to check here;
    - ``--resume`` and ``--overwrite`` together are refused;
    - ``OUT`` must be a folder, or a place where one can be made;
    - a folder another run is writing now (``lock_folder``) is refused;
    - a folder holding none of the command's ``outputs`` (file or folder names) is used;
    - one holding them is a ``what`` run: finished when ``finished`` is there, and then never
      replaced without ``--overwrite``; unfinished otherwise, and then continued with
      ``--resume OUT`` (when one of the command's ``resumable`` files is there) or started
      again with ``--overwrite``. ``--resume`` is the command's to check (what it continues).

    With ``overwrite`` the command removes the earlier run's ``outputs`` when it starts
    (``remove_outputs``), and nothing else of the folder."""
    if resume and overwrite:
        raise ValueError("--resume continues the run in OUT, --overwrite replaces it: give one")
    if out is None:
        return
    if not _usable_out_folder(out) or resume or overwrite:
        return
    _refuse_earlier_run(out, what=what, outputs=outputs, finished=finished, resumable=resumable)


def _usable_out_folder(out: str | Path) -> bool:
    """``--out OUT`` checked as a place: not a file, writable (or creatable), and not a folder
    another run is writing now (ValueError otherwise); True when the folder exists already."""
    p = Path(out)
    if p.exists() and not p.is_dir():
        raise ValueError(f"--out {str(out)!r} is a file, not a folder")
    _check_writable(p, f"--out {str(out)!r}")
    if not p.is_dir():
        return False
    if folder_in_use(p):
        raise ValueError(f"--out {str(out)!r}: another run is writing to it now: wait for it, or choose another --out")
    return True


def _refuse_earlier_run(out: str | Path, *, what: str, outputs: tuple[str, ...], finished: str,
                        resumable: tuple[str, ...]) -> None:
    """ValueError when the folder ``out`` holds an earlier ``what`` run (some of ``outputs``)
    that neither ``--resume`` nor ``--overwrite`` was given for, naming the flag to give."""
    p = Path(out)
    held = [name for name in outputs if (p / name).exists()]
    if not held:
        return
    if (p / finished).exists():
        raise ValueError(f"--out {str(out)!r} holds a finished {what} ({finished}): give --overwrite to replace it, "
                         "or choose another --out")
    again = f"continue it with --resume {str(out)!r}, or give --overwrite to start again" \
        if any((p / name).exists() for name in resumable) else "give --overwrite to replace it"
    raise ValueError(f"--out {str(out)!r} holds an unfinished {what} ({', '.join(held)}): {again}")


def remove_outputs(out: str | Path, outputs: tuple[str, ...]) -> list[str]:
    """Remove the files and folders named ``outputs`` from the folder ``out`` (an earlier run
    that ``--overwrite`` replaces), nothing else; returns the names removed."""
    import shutil

    removed = []
    for name in outputs:
        path = Path(out) / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
        else:
            continue
        removed.append(name)
    return removed
