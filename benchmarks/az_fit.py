"""How well ``bali az``'s network fits its search's targets on positions it has not seen.

``python -m benchmarks.az_fit RUN [--windows 1 2 4 8] [--hidden 128x128 512x512 128x128x128x128]
[--permute-columns] [--out OUT.json]`` reads a run's replay buffer (``RUN/buffer/gen_NNNN.npz``),
holds out its newest generation's rows (other games than any trained on) and fits networks to the
rest, measuring on the held-out rows every ``--every`` Adam steps the policy's cross-entropy to the
search's targets, the value head's loss and how often the network's first choice is the target's.
Four questions, one fit each:

- **data** (``--windows``): a fresh network of the shipped shape fitted to the newest 1, 2, 4, ...
  generations of rows (``bali az --window``), ``--steps-per-generation`` steps for each generation
  of rows (at least ``--min-steps``): does the fit on new games improve with more rows?
- **capacity** (``--hidden``): fresh actors of each shape of hidden layers (``512x512``: two of
  512; ``128x128x128x128``: four of 128), fitted to the largest window: does a wider or a deeper
  network fit new games better?
- **symmetry** (``--permute-columns``): a fresh network of the shipped shape fitted to the largest
  window as the data fit is, but with each row of a batch read with the market's columns in one of
  their 24 orders (``bali_env.engine.symmetry``: the game is the same whatever the columns' order, so
  every row stands for 24; with the Demon variant, 4): does a network taught that the columns are
  alike fit new games better?
- **the loop** (``--loop-steps``): the run's best network trained as ``bali az`` trains it (its
  ``--lr`` unless ``--lr`` is given, its ``--batch``), on the largest window: what its steps do
  to the held-out losses.

It prints each fit's best held-out figures, writes them with every curve as JSON (``--out``, a
temporary file moved into place) and draws them (``--plot``). ``--export PATH`` writes the loop's
fit, its actor at its best held-out policy loss and its value head at its best held-out value
loss, as a policy ``.npz`` (for a match). The fits' batches are seeded: the same run and flags
give the same figures on a machine. Needs torch (the train extra).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import numpy as np


def generations(run: Path) -> list[tuple[int, Path]]:
    """The run's kept buffer files, ``(generation, path)``, oldest first."""
    found = [(int(m.group(1)), p) for p in (run / "buffer").glob("gen_*.npz")
             if (m := re.fullmatch(r"gen_(\d+)\.npz", p.name))]
    return sorted(found)


def target_entropy(rows: dict[str, np.ndarray]) -> float:
    """The targets' mean entropy: the policy loss of a network that predicted them exactly."""
    p = rows["policy"].astype(np.float64)
    return float(-(p * np.log(np.where(p > 0, p, 1.0))).sum(axis=1).mean())


def fit(learner: Any, train: dict[str, np.ndarray], held_out: dict[str, np.ndarray], steps: int, every: int,
        batch: int, seed: int, orders: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, Any]:
    """Train ``learner`` ``steps`` steps on ``train`` (its rows read in ``orders`` if given:
    ``Learner.train``), measuring ``held_out`` before and every ``every`` steps; the curve, the
    best points, and the actor and value layers at their best."""
    from bali_env.trainers.alphazero.learn import _pairs

    curve = [{"step": 0, **learner.evaluate(held_out), "train_policy_loss": None, "train_value_loss": None}]
    best = {"policy": (curve[0]["policy_loss"], 0, _pairs(learner.actor)),
            "value": (curve[0]["value_loss"], 0, _pairs(learner.value))}
    start = time.perf_counter()
    for done in range(every, steps + every, every):
        trained = learner.train(train, min(every, steps - done + every), batch, seed + done, orders=orders)
        point = {"step": min(done, steps), **learner.evaluate(held_out),
                 "train_policy_loss": trained["policy_loss"], "train_value_loss": trained["value_loss"]}
        curve.append(point)
        if point["policy_loss"] < best["policy"][0]:
            best["policy"] = (point["policy_loss"], point["step"], _pairs(learner.actor))
        if point["value_loss"] < best["value"][0]:
            best["value"] = (point["value_loss"], point["step"], _pairs(learner.value))
    at_policy = next(c for c in curve if c["step"] == best["policy"][1])
    return {"rows": len(train["action"]), "steps": steps, "seconds": time.perf_counter() - start, "curve": curve,
            "best_policy_loss": best["policy"][0], "best_policy_step": best["policy"][1],
            "agreement_there": at_policy["agreement"], "best_value_loss": best["value"][0],
            "best_value_step": best["value"][1], "layers": {"actor": best["policy"][2], "value": best["value"][2]}}


def line(name: str, result: dict[str, Any]) -> str:
    """One fit's best held-out figures, as printed."""
    last = result["curve"][-1]
    return (f"{name}: {result['rows']:,} rows, {result['steps']} steps ({result['seconds']:.0f} s): held-out policy "
            f"loss {result['best_policy_loss']:.4f} at step {result['best_policy_step']} (first choice agrees "
            f"{100 * result['agreement_there']:.1f}%), {last['policy_loss']:.4f} at the end; value loss "
            f"{result['best_value_loss']:.4f} at step {result['best_value_step']}, {last['value_loss']:.4f} at the end")


def shape(text: str) -> tuple[int, ...]:
    """A ``--hidden`` shape: ``512x512`` is two hidden layers of 512 (each width 1 to 4096)."""
    import argparse

    try:
        widths = tuple(int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a shape of hidden layers like 128x128: {text!r}") from None
    if not 1 <= len(widths) <= 8 or not all(1 <= w <= 4096 for w in widths):
        raise argparse.ArgumentTypeError(f"a shape is 1 to 8 layers of 1 to 4096 units, like 128x128: {text!r}")
    return widths


def label(fit: dict[str, Any]) -> str:
    """A capacity fit's shape of hidden layers as written: ``512x512``."""
    return "x".join(str(w) for w in fit["hidden"])


def measure(run: Path, windows: list[int], hidden: list[tuple[int, ...]], steps_per_generation: int, min_steps: int,
            loop_steps: int, every: int, seed: int, export: Path | None = None,
            lr: float | None = None, permute_columns: bool = False) -> dict[str, Any]:
    """The fits of the module's docstring on ``run``'s buffer (the loop's at ``lr``, the run's own
    unless given; the symmetry fit with ``permute_columns``)."""
    from bali_env.bots.ppo import ExportedPolicy
    from bali_env.trainers.alphazero import buffer
    from bali_env.trainers.alphazero.learn import HIDDEN, Learner

    config = json.loads((run / "config.json").read_text())
    kept = generations(run)
    if len(kept) < 2:
        raise ValueError(f"{run}/buffer keeps {len(kept)} generation(s) of rows: the fit needs two or more")
    pool, (held_gen, held_path) = kept[:-1], kept[-1]
    held_out = buffer.load(held_path)
    windows = sorted({min(w, len(pool)) for w in windows})
    players, batch = int(config["players"]), int(config["batch"])
    lr = float(config["lr"]) if lr is None else lr
    out: dict[str, Any] = {"run": str(run), "held_out_generation": held_gen, "held_out_rows": len(held_out["action"]),
                           "target_entropy": target_entropy(held_out), "pool_generations": [g for g, _ in pool],
                           "every": every, "seed": seed, "fresh_lr": 1e-3, "batch": batch, "data": [],
                           "capacity": [], "columns": None, "loop": None}
    print(f"{run}: {len(pool)} generations of rows to fit, generation {held_gen} held out "
          f"({out['held_out_rows']:,} rows; its targets' entropy {out['target_entropy']:.4f})", flush=True)

    def rows_of(window: int) -> dict[str, np.ndarray]:
        return buffer.window(run, pool[-1][0], window)

    def steps_for(window: int) -> int:
        return max(min_steps, steps_per_generation * window)

    train = rows_of(windows[-1])
    if loop_steps:
        learner = Learner.from_policy(ExportedPolicy(run / "best.npz"), lr)
        result = fit(learner, train, held_out, loop_steps, every, batch, seed)
        print(line(f"the loop's training from the best network, window {windows[-1]}, lr {lr:g}", result),
              flush=True)
        out["loop"] = {"window": windows[-1], "lr": lr, **{k: v for k, v in result.items() if k != "layers"}}
        if export is not None:
            _export(result, learner, export, run, windows[-1])
    for window in windows:
        rows = train if window == windows[-1] else rows_of(window)
        result = fit(Learner.scratch(players, out["fresh_lr"], seed), rows, held_out, steps_for(window), every,
                     batch, seed)
        print(line(f"data, window {window}", result), flush=True)
        out["data"].append({"window": window, **{k: v for k, v in result.items() if k != "layers"}})
    if permute_columns:
        from bali_env.bots.features import features_for_input, input_permutation
        from bali_env.engine import O_VARIANTS, column_orders

        features = features_for_input(train["input"].shape[1])
        same_game = column_orders(demon=bool(train["input"][:, O_VARIANTS + 1].any()))  # the Demon keeps 4
        orders = tuple(np.stack(m) for m in zip(*(input_permutation(o, features) for o in same_game), strict=True))
        result = fit(Learner.scratch(players, out["fresh_lr"], seed), train, held_out, steps_for(windows[-1]),
                     every, batch, seed, orders)
        print(line(f"symmetry, window {windows[-1]}, columns in random order", result), flush=True)
        out["columns"] = {"window": windows[-1], "orders": len(same_game),
                          **{k: v for k, v in result.items() if k != "layers"}}
    for layers in dict.fromkeys(hidden):
        if tuple(layers) == HIDDEN:
            same = next(d for d in out["data"] if d["window"] == windows[-1])
            out["capacity"].append({"hidden": list(layers), **same})
            continue
        result = fit(Learner.scratch(players, out["fresh_lr"], seed, hidden=tuple(layers)), train, held_out,
                     steps_for(windows[-1]), every, batch, seed)
        print(line(f"capacity, {label({'hidden': layers})}", result), flush=True)
        out["capacity"].append({"hidden": list(layers), **{k: v for k, v in result.items() if k != "layers"}})
    return out


def table(result: dict[str, Any]) -> str:
    """The fits as a Markdown table (the docs quote it): one row a fit, the held-out figures at
    the best policy loss and the best value loss (the step in brackets)."""

    def row(name: str, fit: dict[str, Any]) -> str:
        return (f"| {name} | {fit['rows']:,} | {fit['steps']:,} | {fit['best_policy_loss']:.3f} "
                f"({fit['best_policy_step']:,}) | {100 * fit['agreement_there']:.1f}% | "
                f"{fit['best_value_loss']:.3f} ({fit['best_value_step']:,}) |")

    lines = ["| fit | rows | Adam steps | policy loss (at step) | first choice the target's | value loss (at step) |",
             "|---|---:|---:|---|---:|---|"]
    lines += [row(f"fresh, 128x128, {d['window']} generation(s)", d) for d in result["data"]]
    lines += [row(f"fresh, {label(d)}, {d['rows']:,} rows", d) for d in result["capacity"]
              if not any(d["curve"] == e["curve"] for e in result["data"])]
    if result.get("columns"):
        lines.append(row(f"fresh, 128x128, {result['columns']['rows']:,} rows, columns in random order",
                         result["columns"]))
    loop = result["loop"]
    if loop:
        start = loop["curve"][0]
        lines.append(f"| the best network as it is | | 0 | {start['policy_loss']:.3f} | "
                     f"{100 * start['agreement']:.1f}% | {start['value_loss']:.3f} |")
        lines.append(row(f"the best network trained on (lr {loop['lr']:g})", loop))
    return "\n".join(lines)


def _export(result: dict[str, Any], learner: Any, path: Path, run: Path, window: int) -> None:
    """Write a fit's best actor and best value head as a policy ``.npz``."""
    from bali_env.bots.ppo import write_policy
    from bali_env.trainers.alphazero.learn import _load_pairs

    _load_pairs(learner.actor, result["layers"]["actor"])
    _load_pairs(learner.value, result["layers"]["value"])
    policy = learner.policy(source=f"benchmarks.az_fit on {run}, window {window}")
    weights, info = policy.arrays()
    print(f"wrote {write_policy(weights, info, path, value=policy.value_arrays())}")


def _dress(ax: Any, title: str, ylabel: str) -> None:
    """One panel's title, axes' labels (Adam steps across), grid and legend."""
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("Adam steps")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)


def plot(result: dict[str, Any], path: Path) -> Path:
    """The fits' held-out policy loss (and the symmetry fit's and the loop's value loss), as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bali_env.files import replace_when_done

    fits = [("A fresh network: more rows", [(f"{d['window']} generation(s), {d['rows']:,} rows", d)
                                             for d in result["data"]])]
    if result["capacity"]:
        fits.append((f"A fresh network: wider, deeper ({result['capacity'][0]['rows']:,} rows)",
                     [(f"hidden layers {label(d)}", d) for d in result["capacity"]]))
    loop, columns = result["loop"], result.get("columns")
    panels = len(fits) + bool(columns) + bool(loop)
    fig, axes = plt.subplots(1, panels, figsize=(max(5 * panels, 9), 4.4), squeeze=False)
    lows = [c["policy_loss"] for _, lines in fits for _, d in lines for c in d["curve"][1:]]
    for ax, (title, lines) in zip(axes[0], fits, strict=False):
        for name, d in lines:
            ax.plot([c["step"] for c in d["curve"]], [c["policy_loss"] for c in d["curve"]], label=name)
        _dress(ax, title, "policy loss on held-out games")
        ax.set_ylim(min(lows) - 0.02, min(lows) + 0.3)
    if columns:
        ax = axes[0][len(fits)]
        plain = next(d for d in result["data"] if d["window"] == columns["window"])
        for name, d, style in (("as dealt", plain, "-"), ("columns in random order", columns, "--")):
            steps = [c["step"] for c in d["curve"][1:]]
            for key, color in (("policy", "C0"), ("value", "C3")):
                ax.plot(steps, [c[f"{key}_loss"] for c in d["curve"][1:]], style, color=color,
                        label=f"{key} loss, {name}")
        _dress(ax, f"A fresh network: the market's columns ({columns['rows']:,} rows)", "loss on held-out games")
    if loop:
        ax = axes[0][-1]
        steps = [c["step"] for c in loop["curve"]]
        for key, color in (("value", "C3"), ("policy", "C0")):
            ax.plot(steps, [c[f"{key}_loss"] for c in loop["curve"]], color=color, label=f"{key} loss, held-out games")
            ax.plot(steps[1:], [c[f"train_{key}_loss"] for c in loop["curve"][1:]], "--", color=color,
                    label=f"{key} loss, the rows trained on")
        _dress(ax, f"The best network trained as the loop does ({loop['rows']:,} rows)", "loss")
    fig.suptitle(f"Fitting the search's targets: {result['run']}, generation {result['held_out_generation']} held out "
                 f"(its targets' entropy {result['target_entropy']:.3f})", fontsize=10)
    fig.tight_layout()
    with replace_when_done(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    """Fit, print, and write ``--out`` / ``--plot`` / ``--export`` if given."""
    from bali_env import flags
    from bali_env.engine.validate import arg_type, check_int

    parser = flags.Parser(prog="python -m benchmarks.az_fit", description=__doc__.split("\n\n")[0],
                          parents=[flags.out("write the result there as JSON"),
                                   flags.seed(0, "the initialisations and the batches")])
    parser.add_argument("run", type=Path, help="a bali az run's folder (with its buffer/)")
    parser.add_argument("--windows", type=arg_type(check_int, 1, 1000), nargs="+", default=[1, 2, 4],
                        help="generations of rows for the data fits (default 1 2 4)")
    parser.add_argument("--hidden", type=shape, nargs="*", default=[(128, 128), (256, 256), (512, 512)],
                        help="shapes of hidden layers for the capacity fits (128x128x128: three of 128), "
                             "none for none (default 128x128 256x256 512x512)")
    parser.add_argument("--steps-per-generation", type=arg_type(check_int, 1, 10**6), default=1000,
                        help="Adam steps per generation of rows (default 1000)")
    parser.add_argument("--min-steps", type=arg_type(check_int, 1, 10**6), default=2000,
                        help="Adam steps of a fit at least (default 2000)")
    parser.add_argument("--loop-steps", type=arg_type(check_int, 0, 10**6), default=2000,
                        help="steps of the loop's training from the best network, 0 for none (default 2000)")
    parser.add_argument("--every", type=arg_type(check_int, 1, 10**6), default=250,
                        help="steps between two measures (default 250)")
    parser.add_argument("--lr", type=float, default=None,
                        help="the loop's learning rate (default: the run's --lr)")
    parser.add_argument("--permute-columns", action="store_true",
                        help="fit one more fresh network, reading each row with the market's columns in a random order")
    parser.add_argument("--plot", type=Path, default=None, help="draw the fits there as a PNG")
    parser.add_argument("--export", type=Path, default=None,
                        help="write the loop's fit there as a policy .npz (with --loop-steps)")
    args = parser.parse_args(argv)
    if not 0 <= args.seed < 2**31:
        parser.error(f"--seed must lie in [0, 2**31), got {args.seed}")
    if args.lr is not None and not 0 < args.lr < 1:
        parser.error(f"--lr must lie between 0 and 1, got {args.lr}")
    if args.export and not args.loop_steps:
        parser.error("--export writes the loop's fit: it needs --loop-steps above 0")
    if not (args.run / "config.json").is_file():
        parser.error(f"{args.run} is not a bali az run (no config.json)")
    try:
        result = measure(args.run, args.windows, args.hidden, args.steps_per_generation, args.min_steps,
                         args.loop_steps, args.every, args.seed, args.export, args.lr, args.permute_columns)
    except ValueError as err:
        parser.error(str(err))
    print(table(result))
    if args.out:
        from benchmarks import write_result

        print(f"wrote {write_result(result, args.out)}")
    if args.plot:
        print(f"wrote {plot(result, args.plot)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
