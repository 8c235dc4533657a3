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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

FRESH_LR = 1e-3  #: the learning rate of the fresh networks (the data, capacity and symmetry fits)


@dataclass(frozen=True)
class FitPlan:
    """The fits ``measure`` makes (the module docstring's flags, their defaults here): the
    ``windows`` of the data fits, the ``hidden`` shapes of the capacity fits, each fresh fit's
    steps (``steps_for``), the loop's ``loop_steps`` (0: no loop fit) at ``lr`` (None: the run's),
    measures every ``every`` steps, the batches' ``seed``, the symmetry fit with
    ``permute_columns``, and where to ``export`` the loop's fit (None: nowhere)."""

    windows: tuple[int, ...] = (1, 2, 4)
    hidden: tuple[tuple[int, ...], ...] = ((128, 128), (256, 256), (512, 512))
    steps_per_generation: int = 1000
    min_steps: int = 2000
    loop_steps: int = 2000
    every: int = 250
    seed: int = 0
    export: Path | None = None
    lr: float | None = None
    permute_columns: bool = False

    def steps_for(self, window: int) -> int:
        """A fresh fit's Adam steps on ``window`` generations of rows."""
        return max(self.min_steps, self.steps_per_generation * window)


@dataclass(frozen=True)
class FitRows:
    """A run's rows as the fits read them: the generations to fit (``pool``), the newest held
    out (``held_generation``, its rows ``held_out``), the data fits' ``windows`` (at most the
    pool's size), the largest window's rows (``train``), and the run's players and batch."""

    run: Path
    pool: list[tuple[int, Path]]
    held_generation: int
    held_out: dict[str, np.ndarray]
    windows: list[int]
    train: dict[str, np.ndarray]
    players: int
    batch: int

    @classmethod
    def read(cls, run: Path, config: dict[str, Any], windows: tuple[int, ...]) -> FitRows:
        """The rows of ``run`` (its ``config``); ValueError when it keeps fewer than two generations."""
        from bali_env.trainers.alphazero import buffer

        kept = generations(run)
        if len(kept) < 2:
            raise ValueError(f"{run}/buffer keeps {len(kept)} generation(s) of rows: the fit needs two or more")
        pool, (held_gen, held_path) = kept[:-1], kept[-1]
        held_out = buffer.load(held_path)
        fitted = sorted({min(w, len(pool)) for w in windows})
        return cls(run, pool, held_gen, held_out, fitted, buffer.window(run, pool[-1][0], fitted[-1]),
                   int(config["players"]), int(config["batch"]))

    def rows(self, window: int) -> dict[str, np.ndarray]:
        """The newest ``window`` generations of the pool's rows."""
        from bali_env.trainers.alphazero import buffer

        return self.train if window == self.windows[-1] else buffer.window(self.run, self.pool[-1][0], window)


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
    from bali_env.trainers.alphazero.learn import layer_pairs

    curve = [{"step": 0, **learner.evaluate(held_out), "train_policy_loss": None, "train_value_loss": None}]
    best = {"policy": (curve[0]["policy_loss"], 0, layer_pairs(learner.actor)),
            "value": (curve[0]["value_loss"], 0, layer_pairs(learner.value))}
    start = time.perf_counter()
    for done in range(every, steps + every, every):
        trained = learner.train(train, min(every, steps - done + every), batch, seed + done, orders=orders)
        point = {"step": min(done, steps), **learner.evaluate(held_out),
                 "train_policy_loss": trained["policy_loss"], "train_value_loss": trained["value_loss"]}
        curve.append(point)
        if point["policy_loss"] < best["policy"][0]:
            best["policy"] = (point["policy_loss"], point["step"], layer_pairs(learner.actor))
        if point["value_loss"] < best["value"][0]:
            best["value"] = (point["value_loss"], point["step"], layer_pairs(learner.value))
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


def measure(run: Path, plan: FitPlan) -> dict[str, Any]:
    """The fits of the module's docstring on ``run``'s buffer, as ``plan`` says (the loop's at
    ``plan.lr``, the run's own unless given)."""
    config = json.loads((run / "config.json").read_text())
    rows = FitRows.read(run, config, plan.windows)
    lr = float(config["lr"]) if plan.lr is None else plan.lr
    out: dict[str, Any] = {"run": str(run), "held_out_generation": rows.held_generation,
                           "held_out_rows": len(rows.held_out["action"]),
                           "target_entropy": target_entropy(rows.held_out),
                           "pool_generations": [g for g, _ in rows.pool], "every": plan.every, "seed": plan.seed,
                           "fresh_lr": FRESH_LR, "batch": rows.batch, "data": [], "capacity": [], "columns": None,
                           "loop": None}
    print(f"{run}: {len(rows.pool)} generations of rows to fit, generation {rows.held_generation} held out "
          f"({out['held_out_rows']:,} rows; its targets' entropy {out['target_entropy']:.4f})", flush=True)
    if plan.loop_steps:
        out["loop"] = _loop_fit(rows, plan, lr)
    out["data"] = [_data_fit(rows, plan, window) for window in rows.windows]
    if plan.permute_columns:
        out["columns"] = _symmetry_fit(rows, plan)
    out["capacity"] = [_capacity_fit(rows, plan, layers, out["data"]) for layers in dict.fromkeys(plan.hidden)]
    return out


def _figures(result: dict[str, Any]) -> dict[str, Any]:
    """A fit's figures as written: all but its layers."""
    return {k: v for k, v in result.items() if k != "layers"}


def _loop_fit(rows: FitRows, plan: FitPlan, lr: float) -> dict[str, Any]:
    """The loop's fit: the run's best network trained as ``bali az`` trains it, at ``lr``, on the
    largest window (exported where ``plan.export`` says)."""
    from bali_env.bots.ppo import ExportedPolicy
    from bali_env.trainers.alphazero.learn import Learner

    window = rows.windows[-1]
    learner = Learner.from_policy(ExportedPolicy(rows.run / "best.npz"), lr)
    result = fit(learner, rows.train, rows.held_out, plan.loop_steps, plan.every, rows.batch, plan.seed)
    print(line(f"the loop's training from the best network, window {window}, lr {lr:g}", result), flush=True)
    if plan.export is not None:
        _export(result, learner, plan.export, rows.run, window)
    return {"window": window, "lr": lr, **_figures(result)}


def _data_fit(rows: FitRows, plan: FitPlan, window: int) -> dict[str, Any]:
    """The data fit on ``window`` generations: a fresh network of the shipped shape."""
    from bali_env.trainers.alphazero.learn import Learner

    result = fit(Learner.scratch(rows.players, FRESH_LR, plan.seed), rows.rows(window), rows.held_out,
                 plan.steps_for(window), plan.every, rows.batch, plan.seed)
    print(line(f"data, window {window}", result), flush=True)
    return {"window": window, **_figures(result)}


def _symmetry_fit(rows: FitRows, plan: FitPlan) -> dict[str, Any]:
    """The symmetry fit: the largest window's data fit with each row read with the market's
    columns in one of their orders (24; 4 with the Demon)."""
    from bali_env.bots.features import features_for_input, input_permutation
    from bali_env.engine import O_VARIANTS, column_orders
    from bali_env.trainers.alphazero.learn import Learner

    window, train = rows.windows[-1], rows.train
    features = features_for_input(train["input"].shape[1])
    same_game = column_orders(demon=bool(train["input"][:, O_VARIANTS + 1].any()))  # the Demon keeps 4
    orders = tuple(np.stack(m) for m in zip(*(input_permutation(o, features) for o in same_game), strict=True))
    result = fit(Learner.scratch(rows.players, FRESH_LR, plan.seed), train, rows.held_out, plan.steps_for(window),
                 plan.every, rows.batch, plan.seed, orders)
    print(line(f"symmetry, window {window}, columns in random order", result), flush=True)
    return {"window": window, "orders": len(same_game), **_figures(result)}


def _capacity_fit(rows: FitRows, plan: FitPlan, layers: tuple[int, ...], data: list[dict[str, Any]]) -> dict[str, Any]:
    """The capacity fit of a fresh actor with the hidden ``layers`` on the largest window (the
    shipped shape's is the data fit there, not fitted again)."""
    from bali_env.trainers.alphazero.learn import HIDDEN, Learner

    window = rows.windows[-1]
    if tuple(layers) == HIDDEN:
        return {"hidden": list(layers), **next(d for d in data if d["window"] == window)}
    result = fit(Learner.scratch(rows.players, FRESH_LR, plan.seed, hidden=tuple(layers)), rows.train, rows.held_out,
                 plan.steps_for(window), plan.every, rows.batch, plan.seed)
    print(line(f"capacity, {label({'hidden': layers})}", result), flush=True)
    return {"hidden": list(layers), **_figures(result)}


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
    from bali_env.trainers.alphazero.learn import load_pairs

    load_pairs(learner.actor, result["layers"]["actor"])
    load_pairs(learner.value, result["layers"]["value"])
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

    fits = _fresh_panels(result)
    loop, columns = result["loop"], result.get("columns")
    panels = len(fits) + bool(columns) + bool(loop)
    fig, axes = plt.subplots(1, panels, figsize=(max(5 * panels, 9), 4.4), squeeze=False)
    _draw_fresh(axes[0], fits)
    if columns:
        _draw_columns(axes[0][len(fits)], result, columns)
    if loop:
        _draw_loop(axes[0][-1], loop)
    fig.suptitle(f"Fitting the search's targets: {result['run']}, generation {result['held_out_generation']} held out "
                 f"(its targets' entropy {result['target_entropy']:.3f})", fontsize=10)
    fig.tight_layout()
    with replace_when_done(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
    return path


def _fresh_panels(result: dict[str, Any]) -> list[tuple[str, list[tuple[str, dict[str, Any]]]]]:
    """The panels of the fresh networks' policy losses: (title, [(a curve's name, its fit)]):
    the data fits, and the capacity fits when there are any."""
    fits = [("A fresh network: more rows", [(f"{d['window']} generation(s), {d['rows']:,} rows", d)
                                             for d in result["data"]])]
    if result["capacity"]:
        fits.append((f"A fresh network: wider, deeper ({result['capacity'][0]['rows']:,} rows)",
                     [(f"hidden layers {label(d)}", d) for d in result["capacity"]]))
    return fits


def _draw_fresh(axes: Any, fits: list[tuple[str, list[tuple[str, dict[str, Any]]]]]) -> None:
    """The fresh networks' panels (``_fresh_panels``), on one scale of policy loss."""
    lows = [c["policy_loss"] for _, lines in fits for _, d in lines for c in d["curve"][1:]]
    for ax, (title, lines) in zip(axes, fits, strict=False):
        for name, d in lines:
            ax.plot([c["step"] for c in d["curve"]], [c["policy_loss"] for c in d["curve"]], label=name)
        _dress(ax, title, "policy loss on held-out games")
        ax.set_ylim(min(lows) - 0.02, min(lows) + 0.3)


def _draw_columns(ax: Any, result: dict[str, Any], columns: dict[str, Any]) -> None:
    """The symmetry fit's panel: its policy and value losses beside the data fit's on the same rows."""
    plain = next(d for d in result["data"] if d["window"] == columns["window"])
    for name, d, style in (("as dealt", plain, "-"), ("columns in random order", columns, "--")):
        steps = [c["step"] for c in d["curve"][1:]]
        for key, color in (("policy", "C0"), ("value", "C3")):
            ax.plot(steps, [c[f"{key}_loss"] for c in d["curve"][1:]], style, color=color,
                    label=f"{key} loss, {name}")
    _dress(ax, f"A fresh network: the market's columns ({columns['rows']:,} rows)", "loss on held-out games")


def _draw_loop(ax: Any, loop: dict[str, Any]) -> None:
    """The loop's panel: its value and policy losses on the held-out games and on the rows trained on."""
    steps = [c["step"] for c in loop["curve"]]
    for key, color in (("value", "C3"), ("policy", "C0")):
        ax.plot(steps, [c[f"{key}_loss"] for c in loop["curve"]], color=color, label=f"{key} loss, held-out games")
        ax.plot(steps[1:], [c[f"train_{key}_loss"] for c in loop["curve"][1:]], "--", color=color,
                label=f"{key} loss, the rows trained on")
    _dress(ax, f"The best network trained as the loop does ({loop['rows']:,} rows)", "loss")


def main(argv: list[str] | None = None) -> int:
    """Fit, print, and write ``--out`` / ``--plot`` / ``--export`` if given."""
    from bali_env import flags
    from bali_env.engine.validate import arg_type, check_int

    parser = flags.Parser(prog="python -m benchmarks.az_fit", description=__doc__.split("\n\n")[0],
                          parents=[flags.out("write the result there as JSON"),
                                   flags.seed(0, "the initialisations and the batches")])
    parser.add_argument("run", type=Path, help="a bali az run's folder (with its buffer/)")
    parser.add_argument("--windows", type=arg_type(check_int, 1, 1000), nargs="+", default=list(FitPlan.windows),
                        help="generations of rows for the data fits (default 1 2 4)")
    parser.add_argument("--hidden", type=shape, nargs="*", default=list(FitPlan.hidden),
                        help="shapes of hidden layers for the capacity fits (128x128x128: three of 128), "
                             "none for none (default 128x128 256x256 512x512)")
    parser.add_argument("--steps-per-generation", type=arg_type(check_int, 1, 10**6),
                        default=FitPlan.steps_per_generation,
                        help="Adam steps per generation of rows (default 1000)")
    parser.add_argument("--min-steps", type=arg_type(check_int, 1, 10**6), default=FitPlan.min_steps,
                        help="Adam steps of a fit at least (default 2000)")
    parser.add_argument("--loop-steps", type=arg_type(check_int, 0, 10**6), default=FitPlan.loop_steps,
                        help="steps of the loop's training from the best network, 0 for none (default 2000)")
    parser.add_argument("--every", type=arg_type(check_int, 1, 10**6), default=FitPlan.every,
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
    plan = FitPlan(tuple(args.windows), tuple(args.hidden), args.steps_per_generation, args.min_steps,
                   args.loop_steps, args.every, args.seed, args.export, args.lr, args.permute_columns)
    try:
        result = measure(args.run, plan)
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
