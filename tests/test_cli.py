"""The ``bali`` command line's conventions: --version, an unknown command named, help on stdout,
Ctrl-C ends with one line and exit code 130, a missing train extra is one line and exit 2; one
parser whose shared flags are declared once and mean the same in every command, built without
the heavy packages."""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from pathlib import Path

import pytest

import bali_env
from bali_env.apps import cli


def test_version_and_help(capsys):
    """--version prints the package version; -h lists the commands on stdout with exit 0."""
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"bali-env {bali_env.__version__}"
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "tournament" in out and "train" in out


def test_unknown_command_is_named(capsys):
    """A misspelt command says so on stderr and exits 2 (no usage-only output)."""
    assert cli.main(["tournement"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'tournement'" in err and "usage: bali" in err
    assert cli.main([]) == 2


def test_ctrl_c_is_one_line(monkeypatch, capsys):
    """KeyboardInterrupt inside a command: one line on stderr, exit code 130, no traceback."""

    def interrupted(argv):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_tournament", interrupted)
    assert cli.main(["tournament", "--agents", "random", "random"]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "bali tournament: interrupted"


def test_train_without_the_train_extra_is_one_line(monkeypatch, capsys, tmp_path):
    """bali train checks its flags, then its packages, before anything is written."""
    import bali_env.training.train as train_module

    monkeypatch.setattr(train_module, "missing_packages", lambda trainer: ["torch"])
    monkeypatch.setattr(train_module, "train", lambda args: pytest.fail("train() must not start"))
    (tmp_path / "file").write_text("x")
    with pytest.raises(SystemExit) as exc:  # a bad flag first
        cli.main(["train", "--steps", "10", "--out", str(tmp_path / "file" / "run")])
    assert exc.value.code == 2 and "--out" in capsys.readouterr().err
    assert cli.main(["train", "--steps", "10"]) == 2
    err = capsys.readouterr().err
    assert "torch not installed" in err and "pip install" in err


@pytest.mark.parametrize("bad", [["--seed", "-1"], ["--games", "0"], ["--players", "5"]])
def test_demo_refuses_bad_options_before_playing(bad, capsys):
    """bali demo checks its options first: one error line from argparse and exit 2, nothing played."""
    from bali_env.apps.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["demo", *bad])
    assert exc.value.code == 2
    out = capsys.readouterr()
    assert out.out == "" and "bali demo: error:" in out.err


ROOT = Path(__file__).resolve().parent.parent
#: the flags several commands share (``bali_env.engine.flags``)
SHARED_FLAGS = ("--players", "--oracle", "--demon", "--seed", "--games", "--workers", "--move-time", "--game-time",
                "--out", "--progress")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser of every command of ``bali``'s parser, by name."""
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _every_command_parser() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser, ``bali train --framework rllib``'s included."""
    parsers = _subparsers(cli.build_parser())
    parsers["train --framework rllib"] = _subparsers(cli.build_parser(["train", "--framework", "rllib"]))["train"]
    return parsers


def test_one_parser_with_a_subcommand_and_a_help_line_per_command(capsys):
    """``bali --help`` lists every command with its help line; each subcommand is one of
    ``commands()``, its ``run`` the default of ``args.run``."""
    parser = cli.build_parser()
    assert parser.prog == "bali"
    assert list(_subparsers(parser)) == list(cli.commands())
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    required = {"replay": ["game.json"], "fit-value": ["p.npz", "--out", "v.npz"],
                "distil": ["p.npz", "--out", "d.npz"], "exploit": ["greedy"], "tournament": ["--agents", "a", "b"],
                "league": ["--agents", "a", "b"]}  # what a command cannot do without
    for name, command in cli.commands().items():
        assert name in out and command.help.split()[0] in out
        args = cli.parse_command([name, *required.get(name, [])])
        assert args.run is command.run and args.command == name


def test_a_shared_flag_means_the_same_in_every_command():
    """``--seed``, ``--games``, ``--players``, ``--progress``...: one dest, type, action and choice
    list in every command that takes them (``--players`` one count, or several in ``bali league``),
    and progress is ``--progress/--no-progress``, on by default, wherever a command shows it."""
    seen: dict[str, dict[tuple, list[str]]] = {flag: {} for flag in SHARED_FLAGS}
    parsers = _every_command_parser()
    for name, parser in parsers.items():
        for action in parser._actions:
            for flag in set(action.option_strings) & set(SHARED_FLAGS):
                meaning = (action.dest, action.type, type(action).__name__, tuple(action.choices or ()),
                           tuple(action.option_strings))
                seen[flag].setdefault(meaning, []).append(name)
            assert action.dest != "no_progress", f"bali {name}: --no-progress is the off side of --progress"
    for flag, meanings in seen.items():
        assert len(meanings) == 1, f"{flag} means different things: {meanings}"
    progress = seen["--progress"]
    (commands,) = progress.values()
    assert set(commands) >= {"tournament", "league", "train", "train --framework rllib", "exploit", "fit-value",
                             "distil"}
    assert all(parsers[name].get_default("progress") is True for name in commands)
    assert cli.parse_command(["tournament", "--agents", "a", "b", "--no-progress"]).progress is False
    assert cli.parse_command(["league", "--agents", "a", "b", "--players", "2", "3"]).players == [2, 3]


def test_a_shared_flag_is_declared_once():
    """No ``add_argument("--seed", ...)`` (nor a flag table entry) for a shared flag anywhere but
    ``bali_env/engine/flags.py``: every command and tool takes it from there."""
    declared: dict[str, list[str]] = {flag: [] for flag in SHARED_FLAGS}
    for path in sorted([*(ROOT / "bali_env").rglob("*.py"), *(ROOT / "benchmarks").glob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names: list[object] = []
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument":
                names = [a.value for a in node.args if isinstance(a, ast.Constant)]
            elif isinstance(node, ast.Dict):  # a table of flag specs, as training's SHARED
                names = [k.value for k, v in zip(node.keys, node.values, strict=True)
                         if isinstance(k, ast.Constant) and isinstance(v, ast.Dict)]
            for flag in set(names) & set(SHARED_FLAGS):
                declared[flag].append(str(path.relative_to(ROOT)))
    assert declared == {flag: ["bali_env/engine/flags.py"] for flag in SHARED_FLAGS}


def test_building_the_parser_and_the_help_stay_light():
    """Building the parser (both trainers') and printing ``bali --help`` and a command's help
    import neither torch, Ray, matplotlib, Starlette nor stable-baselines3."""
    code = ("import contextlib, io, sys\n"
            "from bali_env.apps.cli import build_parser, main\n"
            "build_parser(); build_parser(['train', '--framework', 'rllib'])\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    for argv in (['--help'], ['train', '--help'], ['train', '--framework', 'rllib', '--help'],\n"
            "                 ['serve', '--help'], ['bench', '--help'], ['fit-value', '--help']):\n"
            "        assert main(argv) == 0, argv\n"
            "heavy = ('torch', 'ray', 'matplotlib', 'starlette', 'uvicorn', 'stable_baselines3', 'sb3_contrib')\n"
            "print(sorted(m for m in heavy if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_train_framework_rllib_has_rllibs_flags(capsys):
    """``bali train --framework rllib`` parses RLlib's options, ``bali train`` the sb3 trainer's."""
    assert cli.parse_command(["train", "--framework", "rllib", "--self-share", "0.5"]).self_share == 0.5
    with pytest.raises(SystemExit):
        cli.parse_command(["train", "--self-share", "0.5"])
    assert "--self-share" in capsys.readouterr().err
    assert cli.parse_command(["train", "--trainer", "lean"]).trainer == "lean"


def test_a_check_after_parsing_is_argparses_error(tmp_path, capsys):
    """A bad argument found after parsing (``UsageError``) reads as argparse's own: the command's
    usage and one line naming the flag, exit 2, nothing created."""
    with pytest.raises(SystemExit) as exc:
        cli.main(["tournament", "--agents", "greedy", "random", "--resume"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: bali tournament") and err.splitlines()[-1] == \
        "bali tournament: error: --resume needs the folder of the run to continue: --resume OUT"
    with pytest.raises(SystemExit):
        cli.main(["bench", "--out", str(tmp_path / "nothing" / "x"), "--seconds", "0"])
    assert "argument --seconds: must be" in capsys.readouterr().err.splitlines()[-1]
    assert not (tmp_path / "nothing").exists()


def test_the_command_line_reaches_each_command(monkeypatch, capsys):
    """``args.argv`` is the command's own arguments as given (a tournament's resume hint repeats
    them); ``command_parser`` is the parser of one command."""
    args = cli.parse_command(["demo", "--games", "3", "--seed", "2"])
    assert args.argv == ["--games", "3", "--seed", "2"] and (args.games, args.seed, args.players) == (3, 2, 4)
    assert cli.command_parser("replay").prog == "bali replay"
    with pytest.raises(ValueError, match="unknown command"):
        cli.command_parser("tournement")
    with pytest.raises(ValueError, match="unknown command"):
        cli.parse_command(["tournement"])


def test_resume_takes_the_folder_in_every_command():
    """``--resume OUT`` continues the run in OUT in every command that resumes (tournament and
    league also take ``--out OUT --resume``); two folders are refused; the hint an interrupted
    tournament prints is the command with ``--resume OUT``."""
    for command in (["tournament", "--agents", "a", "b"], ["league", "--agents", "a", "b"]):
        args = cli.parse_command([*command, "--resume", "runs/x"])
        cli._resume_folder(args, "run")
        assert args.resume is True and args.out == Path("runs/x")
        args = cli.parse_command([*command, "--out", "runs/x", "--resume"])
        cli._resume_folder(args, "run")
        assert args.resume is True and args.out == Path("runs/x")
        args = cli.parse_command([*command, "--out", "runs/y", "--resume", "runs/x"])
        with pytest.raises(cli.UsageError, match="two folders"):
            cli._resume_folder(args, "run")
    assert cli.parse_command(["train", "--resume", "runs/x"]).resume == Path("runs/x")
    assert cli._again("tournament", ["--agents", "a", "b", "--out", "o", "--games", "4"], Path("o")) == \
        ["tournament", "--agents", "a", "b", "--games", "4", "--resume", "o"]
    assert cli._again("tournament", ["--resume", "o", "--seed", "2"], Path("o")) == \
        ["tournament", "--seed", "2", "--resume", "o"]
