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
    import bali_env.trainers.ppo_selfplay.train as train_module

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
#: the flags several commands share (``bali_env.flags``)
SHARED_FLAGS = ("--players", "--oracle", "--demon", "--seed", "--games", "--workers", "--move-time", "--game-time",
                "--out", "--overwrite", "--progress")
#: the commands that write an output folder: one rule for --out (``bali_env.files.check_out_folder``)
#: and --overwrite in each (train and exploit: their own helper adds it, ``bali_env.trainers``)
OUT_FOLDER_COMMANDS = ("tournament", "league", "bench")


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
    ``bali_env/flags.py``: every command and tool takes it from there."""
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
    assert declared == {flag: ["bali_env/flags.py"] for flag in SHARED_FLAGS}


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


@pytest.mark.parametrize("argv", [
    ["tournament", "--agents", "a", "b", "--players", "7"],
    ["league", "--agents", "a", "b", "--games", "x"],
    ["tournament", "--agents", "a", "b", "--resume"],
    ["replay"],
    ["demo", "--seed", "-1"],
    ["exploit"],
    ["bench", "--seconds", "0"],
    ["serve", "--port", "x"],
    ["play", "--no-such-flag"],
])
def test_an_argparse_error_is_two_lines(argv, capsys):
    """Every argparse error (and every ``UsageError``): a one-line usage pointing to the help,
    then the line that matters, exit 2 (before: 8-18 lines of usage before it)."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    usage, error = capsys.readouterr().err.splitlines()
    assert usage.startswith(f"usage: bali {argv[0]} ") and usage.endswith(f"; see 'bali {argv[0]} --help'")
    assert error.startswith(f"bali {argv[0]}: error: ")


def test_an_unknown_command_is_two_lines_with_a_suggestion(capsys):
    """A misspelt command: the usage line and the error naming the closest command."""
    assert cli.main(["tournement"]) == 2
    usage, error = capsys.readouterr().err.splitlines()
    assert usage == "usage: bali COMMAND ... [options]; see 'bali --help'"
    assert error.startswith("bali: error: unknown command 'tournement' (did you mean 'tournament'?)")


def test_every_command_writing_an_output_folder_takes_overwrite():
    """``--overwrite`` (declared once, ``flags.overwrite``) in every command that writes an
    ``--out`` folder, off by default."""
    parsers = _every_command_parser()
    for name in OUT_FOLDER_COMMANDS:
        assert parsers[name].get_default("overwrite") is False, name
        assert cli.parse_command([name, *({"tournament": ["--agents", "a", "b"],
                                           "league": ["--agents", "a", "b"]}.get(name, [])),
                                  "--overwrite"]).overwrite is True


def test_bench_refuses_an_out_holding_a_finished_benchmark(tmp_path, capsys):
    """``bali bench --out OUT`` with an earlier bench.json there: refused before anything is
    measured (before: replaced); ``--overwrite`` lets it through."""
    import bali_env.speed.run as bench

    (tmp_path / "bench.json").write_text("{}")
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", "--out", str(tmp_path), "--quick"])
    assert exc.value.code == 2 and "holds a finished benchmark (bench.json): give --overwrite" in \
        capsys.readouterr().err
    measured = []
    bench_measure = bench.measure
    try:
        bench.measure = measured.append
        assert cli.main(["bench", "--out", str(tmp_path), "--quick", "--overwrite"]) == 0
    finally:
        bench.measure = bench_measure
    assert len(measured) == 1 and (tmp_path / "bench.json").read_text() == "{}"


def _serve(argv: list[str]) -> subprocess.Popen:
    """``bali serve ARGV`` in a process of its own (stdout and stderr piped)."""
    return subprocess.Popen([sys.executable, "-m", "bali_env.apps.cli", "serve", *argv], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_serve_prints_the_url_it_listens_on(tmp_path):
    """``bali serve --port 0``: the URL printed has the port the system gave, and the app answers
    there (before: ``http://127.0.0.1:0/``); a port taken: one line naming it, exit 2, no URL
    (before: the URL of the other server, uvicorn's ``[Errno 98]``, exit 3)."""
    import re
    import socket
    import urllib.request

    pytest.importorskip("uvicorn")
    pytest.importorskip("starlette")
    proc = _serve(["--port", "0"])
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert url and url.group(1) != "0", line
        with urllib.request.urlopen(url.group(0), timeout=30) as page:
            assert page.status == 200
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = _serve(["--port", str(port)])
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and out == ""
    assert err == f"bali serve: error: port {port} on 127.0.0.1 is taken (another server listens there): choose " \
        "another --port, or --port 0 for a free one\n"


BUGGY_BOT = '''from bali_env.bots.random_agent import RandomAgent


class Buggy(RandomAgent):
    name = "buggy"

    def act_batch_keyed(self, o, m, k):
        if (o[:, 10:14].argmax(1) == 1).any():
            raise ZeroDivisionError("oops")
        return super().act_batch_keyed(o, m, k)
'''


def test_a_crashing_bot_shows_its_first_exception_and_traceback(tmp_path, capsys):
    """An in-process bot that raises: the console names the first game it lost so, the exception and
    its traceback, down to the bot's own line (before: only "crash N" in the table, and the
    exception's message inside results.json)."""
    bot = tmp_path / "buggy.py"
    bot.write_text(BUGGY_BOT)
    assert cli.main(["tournament", "--agents", f"{bot}:Buggy", "random", "--players", "2", "--games", "8",
                     "--workers", "1", "--no-progress", "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert "bali tournament: buggy crashed in " in err and ": ZeroDivisionError: oops\nTraceback" in err
    assert f'File "{bot}", line 9, in act_batch_keyed' in err and 'raise ZeroDivisionError("oops")' in err


def test_the_help_says_how_games_are_dealt(capsys):
    """``bali tournament --help`` and ``bali league --help``: game k is dealt from the seed and k
    hashed together (``deal_seed``), as the results say, not from seed SEED + k."""
    for command in ("tournament", "league"):
        assert cli.main([command, "--help"]) == 0
        text = " ".join(capsys.readouterr().out.split())
        assert "SEED + k" not in text and "SEED and k hashed together (deal_seed)" in text, command


def test_overwrite_says_resume_only_where_there_is_one(capsys):
    """The shared --overwrite's help points to --resume OUT only in the commands that take it
    (``bali bench`` has none)."""
    for command in cli.commands():
        parser = cli.command_parser(command)
        flags = {option for action in parser._actions for option in action.option_strings}
        if "--overwrite" not in flags:
            continue
        help_text = next(a.help for a in parser._actions if "--overwrite" in a.option_strings)
        assert ("--resume" in help_text) == ("--resume" in flags), command
