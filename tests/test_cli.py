"""The ``bali`` command line's conventions: --version, an unknown command named, help on stdout,
Ctrl-C ends with one line and exit code 130, a missing train extra is one line and exit 2."""

from __future__ import annotations

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
