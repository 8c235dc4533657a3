"""The repository's benchmark scripts (not installed; run them from a clone's root with
``python -m benchmarks.NAME``). The measurements themselves are ``bali bench``
(``bali_env.speed``).

- ``figures``: the README's and the docs' tables, written from the kept runs in ``docs/results/``;
- ``rerun``: play those kept tournaments again from their own configuration;
- ``compare``: this checkout's speed against another commit, in one run;
- ``throughput``: env steps per second of the training configurations;
- ``puffer_vs_train``: PufferLib's trainer (PuffeRL) against ``bali train`` in env steps per second, same budget;
- ``alphazero``: what a generation of ``bali az`` costs (self-play on 1 and 2 workers, training, gate);
- ``gumbel``: Gumbel's root against PUCT's at equal wall time (matches against the shipped policy);
- ``roots_selfplay``: the two roots' self-play cost, timed in alternating rounds in one process;
- ``az_fit``: how well ``bali az``'s network fits its search's targets on held-out games (more rows, wider, deeper);
- ``az_targets``: how much the search's target for one position changes when the position is searched again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def write_result(result: dict[str, Any], path: Path) -> Path:
    """Stamp ``result`` with today's date and write it to ``path`` as JSON (a temporary file moved
    into place): what a benchmark's ``--out`` keeps."""
    import datetime
    import json

    from bali_env.files import write_text

    result["date"] = datetime.date.today().isoformat()
    return write_text(path, json.dumps(result, indent=1) + "\n")
