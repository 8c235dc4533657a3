"""``bali serve``: the web app on this machine: play against the bots in the browser, and browse a
results folder (``--results DIR``). It listens on loopback by default; every option is checked
before the server starts (a bad one: one line on stderr, exit code 2); Ctrl-C stops it."""

from __future__ import annotations

import argparse
import ipaddress
import sys
from pathlib import Path

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def parents() -> list[argparse.ArgumentParser]:
    """``bali serve`` takes none of the shared flags."""
    return []


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``bali serve``."""
    parser.description = ("Play Bali in the browser against the bots, and browse tournament results (a local web "
                          "app; the web extra).")
    parser.add_argument("--host", default="127.0.0.1",
                        help="the address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="the port (default 8000; 0 = any free port)")
    parser.add_argument("--results", type=Path, default=None, metavar="DIR",
                        help="a folder of tournament results to browse (e.g. results/)")
    parser.add_argument("--agents", nargs="+", default=[], metavar="SPEC",
                        help="more opponents to offer besides the built-in ones (mybot.py:MyBot, "
                             "ppo:path=FILE.npz, mcts:sims=1000...)")


def check(args: argparse.Namespace) -> str | None:
    """What is wrong with the options, or None (nothing is started or created here)."""
    if not 0 <= args.port <= 65535:
        return f"--port must be 0..65535, got {args.port}"
    if args.host not in LOOPBACK:
        try:
            ipaddress.ip_address(args.host)
        except ValueError:
            return f"--host must be an IP address or localhost, got {args.host!r}"
    if args.results is not None and not args.results.is_dir():
        return f"--results {str(args.results)!r} is not a folder"
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        return "bali serve needs the web extra: pip install -e '.[web]' (Starlette and uvicorn)"
    from bali_env.agents.base import make_agent

    for spec in args.agents:
        try:
            make_agent(spec, seed=0)
        except Exception as exc:  # noqa: BLE001 - unknown kind, missing file or extra
            return f"--agents {spec!r}: " + " ".join(str(exc).split())
    return None


def run(args: argparse.Namespace) -> int:
    """``bali serve`` with the options of ``bali``'s parser: check them (one line, exit 2), then
    serve until Ctrl-C; returns the exit code."""
    problem = check(args)
    if problem:
        print(f"bali serve: error: {problem}", file=sys.stderr)
        return 2
    import uvicorn

    from .app import create_app

    hosts = list(dict.fromkeys([*LOOPBACK, "[::1]", args.host]))
    app = create_app(args.agents, args.results, hosts=hosts if args.host in LOOPBACK else ["*"])
    if args.host not in LOOPBACK:
        print(f"bali serve: listening on {args.host}: anyone who can reach this machine can use the app",
              file=sys.stderr)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"Bali web app: http://{shown}:{args.port}/" + (" (results: /results/)" if args.results else "")
          + "  (Ctrl-C to stop)", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
