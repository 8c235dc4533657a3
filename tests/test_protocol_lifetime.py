"""No bot process outlives the bali process that started it, however that process ends (its
guard kills the bot's process group when bali closes the lifeline or dies: SIGKILL included),
and a bot that fails to start says why (the tail of its standard error) where there is no log."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bali_env.arena import TournamentError, run_tournament
from bali_env.bots.protocol import BotFault
from bali_env.bots.protocol.process import BotProcess

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc (Linux)")

# a bot that answers hello, then on its first decision starts a child, writes both pids and hangs
HANGING_BOT = """\
import json, subprocess, sys, time
for raw in sys.stdin:
    m = json.loads(raw)
    if m["type"] == "hello":
        print(json.dumps({"type": "hello", "version": 1, "name": "hanging"}), flush=True)
    elif m["type"] == "decide":
        child = subprocess.Popen(["sleep", "600"])
        with open(sys.argv[1] + ".tmp", "w") as f:
            f.write(f"{__import__('os').getpid()} {child.pid}")
        __import__("os").replace(sys.argv[1] + ".tmp", sys.argv[1])
        time.sleep(600)
"""


def running(pid: int) -> bool:
    """True while the process exists and is not a zombie (a dead child its parent has not reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def _status(pid: int) -> str:
    """A process's command line, state and signal masks, for a failure's message."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:120]
    except OSError:
        return "gone"
    keep = [ln for ln in lines if ln.split(":")[0] in ("State", "SigBlk", "SigIgn", "SigCgt")]
    return f"{cmd} | " + ", ".join(" ".join(ln.split()) for ln in keep)


def descendants(root: int) -> list[int]:
    """Every process below ``root`` now."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        for kid in children.get(todo.pop(), []):
            found.append(kid)
            todo.append(kid)
    return found


def wait_for(path: Path, proc: subprocess.Popen[bytes], seconds: float) -> list[int]:
    """The pids the hanging bot wrote once it thinks (its own and its child's)."""
    deadline = time.monotonic() + seconds
    while not path.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"the bot never got a decision: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        time.sleep(0.05)
    return [int(p) for p in path.read_text().split()]


def survivors(pids: list[int], seconds: float = 5.0) -> list[int]:
    """The pids still running after up to ``seconds``."""
    deadline = time.monotonic() + seconds
    while (alive := [p for p in pids if running(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    for p in alive:  # leave nothing behind, whatever the test says
        os.kill(p, signal.SIGKILL)
    return alive


@pytest.fixture
def hanging_bot(tmp_path: Path) -> tuple[Path, Path]:
    script = tmp_path / "hanging_bot.py"
    script.write_text(HANGING_BOT)
    return script, tmp_path / "pids"


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_bot_dies_with_the_process_that_started_it(hanging_bot, sig):
    """A process with a bot that thinks is killed (SIGKILL: nothing of it runs any more; SIGTERM:
    Python's default, no clean-up): the bot and the child it started die within seconds."""
    script, pids = hanging_bot
    host = subprocess.Popen([sys.executable, "-c", (
        "import sys\nfrom bali_env.bots.protocol.process import BotProcess\n"
        f"bot = BotProcess([sys.executable, {str(script)!r}, {str(pids)!r}])\n"
        "bot.start(600.0, None)\nbot.request({'type': 'decide', 'legal': []}, 600)\n")],
        stderr=subprocess.PIPE)
    bot = wait_for(pids, host, 60)
    host.send_signal(sig)
    host.wait(10)
    assert survivors(bot) == []


@pytest.mark.slow
def test_a_bot_closed_or_killed_takes_its_children_along(hanging_bot):
    """``kill`` and ``close`` end the bot's whole process group (the child it started too)."""
    script, pids = hanging_bot
    for stop in ("kill", "close"):
        pids.unlink(missing_ok=True)
        bot = BotProcess([sys.executable, str(script), str(pids)])
        bot.start(600.0, None)
        bot._write(bot.proc, b'{"type": "decide", "legal": []}\n', time.monotonic() + 5)  # type: ignore[arg-type]
        deadline = time.monotonic() + 30
        while not pids.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        both = [int(p) for p in pids.read_text().split()]
        getattr(bot, stop)()
        assert survivors(both) == [], stop


def test_the_guard_passes_the_bots_exit_on():
    """The guard exits as the bot did (code or signal) and a program it cannot run says why."""
    for argv, code in ((["/bin/sh", "-c", "exit 3"], 3), (["/bin/sh", "-c", "kill -9 $$"], -9)):
        bot = BotProcess(argv)
        bot.proc = bot._spawn()
        assert bot.proc.wait(10) == code
        bot.kill()
    with pytest.raises(BotFault) as exc:
        BotProcess(["/no/such/program"]).start(1.0, None)
    assert exc.value.reason == "crash" and exc.value.detail == (
        "exited with code 127; its standard error ends: bali: cannot start '/no/such/program': "
        "No such file or directory")


def _tournament(script: Path, pids: Path, workers: int, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "bali_env.apps.cli", "tournament", "--agents", f"cmd:{sys.executable} {script} {pids}",
         "random", "--players", "2", "--games", "2", "--workers", str(workers), "--move-time", "600", "--seed", "0",
         "--out", str(out), "--no-progress"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


@pytest.mark.parametrize("sig, workers", [
    pytest.param(signal.SIGKILL, 1, marks=pytest.mark.slow, id="SIGKILL-1-worker"),
    pytest.param(signal.SIGKILL, 2, marks=pytest.mark.slow, id="SIGKILL-2-workers"),
    pytest.param(signal.SIGTERM, 2, marks=pytest.mark.slow, id="SIGTERM-2-workers"),
    pytest.param(signal.SIGINT, 2, marks=pytest.mark.slow, id="SIGINT-2-workers"),
])
def test_no_bot_outlives_its_tournament(hanging_bot, tmp_path, sig, workers):
    """``bali tournament`` killed (SIGKILL), terminated (SIGTERM: exit 130) or interrupted
    (SIGINT) while a bot thinks: within seconds no bot, no worker, nothing it started runs."""
    script, pids = hanging_bot
    tournament = _tournament(script, pids, workers, tmp_path / "out")
    bot = wait_for(pids, tournament, 300)
    family = descendants(tournament.pid)
    assert set(bot) <= set(family)
    tournament.send_signal(sig)
    try:
        code = tournament.wait(30)
    except subprocess.TimeoutExpired:
        left = {pid: _status(pid) for pid in [tournament.pid, *family] if running(pid)}
        tournament.kill()
        raise AssertionError(f"still running 30 s after {sig.name}: {left}; its stderr: "
                             f"{tournament.communicate()[1].decode()[-2000:]}") from None
    assert code == (-9 if sig == signal.SIGKILL else 130), tournament.stderr.read().decode()[-2000:]  # type: ignore[union-attr]
    assert survivors(family) == []


# ----------------------------------------------------------------------------- a bot that does not start
def test_a_bot_that_fails_the_start_up_check_says_why(tmp_path):
    """The start-up check (hello, then quit, before any game) keeps no log: the refusal ends with
    the tail of the bot's standard error."""
    script = tmp_path / "broken.py"
    script.write_text("import sys\nprint('loading weights.bin', file=sys.stderr)\n"
                      "raise SystemExit('weights.bin: no such file')\n")
    with pytest.raises(TournamentError) as exc:
        run_tournament([f"cmd:{sys.executable} {script}", "random"], num_players=2, games=2, progress=False)
    assert str(exc.value).endswith("the bot did not start: crash: exited with code 1; its standard error ends: "
                                   "loading weights.bin | weights.bin: no such file"), str(exc.value)


def test_the_start_up_check_says_hello_with_the_runs_clock(tmp_path):
    """The start-up check's hello carries the tournament's clock, as every game's does."""
    script, hellos = tmp_path / "clock.py", tmp_path / "hellos"
    script.write_text("import json, sys\nfor raw in sys.stdin:\n    m = json.loads(raw)\n"
                      "    if m['type'] == 'hello':\n        open(sys.argv[1], 'a').write(raw)\n"
                      "        print(json.dumps({'type': 'hello', 'version': 1, 'name': 'clock'}), flush=True)\n"
                      "    elif m['type'] == 'decide':\n        print(m['legal'][0]['id'], flush=True)\n"
                      "    elif m['type'] == 'quit':\n        break\n")
    result = run_tournament([f"cmd:{sys.executable} {script} {hellos}", "random"], num_players=2, games=2,
                            workers=1, progress=False, move_time=3.5, game_time=60)
    assert result.games and all(g.get("forfeit") is None for g in result.games)
    said = hellos.read_text().splitlines()
    assert len(said) == 2  # the check's hello, then the games' process's
    assert all('"move_time":3.5,"game_time":60' in line for line in said), said


def test_a_bot_that_crashes_where_there_is_no_log_says_why():
    """``bali play`` keeps no bot log: a bot that crashes mid-game ends the game with a message
    that ends with the tail of its standard error."""
    from bali_env.apps.terminal import play_game

    printed: list[str] = []
    play_game(2, [f"cmd:{sys.executable} {ROOT / 'tests' / 'faulty_bot.py'} crash 3"], seed=1,
              input_fn=lambda prompt: "1", print_fn=lambda *a: printed.append(" ".join(map(str, a))))
    assert any("exited with code 3; its standard error ends: misbehaving (crash) at decision 3" in " ".join(
        line.split()) for line in printed), printed[-3:]


def test_a_tournaments_results_never_quote_a_bots_stderr(tmp_path):
    """In a tournament the bot's standard error goes to its log (or, without a folder, nowhere):
    a fault's detail never quotes it, so the results do not depend on where the logs go."""
    spec = f"cmd:{sys.executable} {ROOT / 'tests' / 'faulty_bot.py'} crash 5 1"
    runs = [run_tournament([spec, "random"], num_players=2, games=2, seed=1, workers=1, progress=False, out_dir=out)
            for out in (None, tmp_path / "t")]
    assert runs[0].games == runs[1].games
    assert [g["forfeit"]["detail"] for g in runs[0].games] == ["exited with code 3"] * 2
