"""``bali serve``: the web app on this machine: play against the bots in the browser, and browse a
results folder (``--results DIR``). It listens on loopback by default; every option is checked
before the server starts (a bad one: one line on stderr, exit code 2). The port is bound before
anything is printed, so the URL printed is the one it listens on (``--port 0``: the free port the
system gave), and a port already taken is one line naming it (exit 2), no URL; Ctrl-C stops it."""

from __future__ import annotations

import argparse
import errno
import ipaddress
import socket
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
    from bali_env.bots.registry import make_agent

    for spec in args.agents:
        try:
            make_agent(spec, seed=0)
        except Exception as exc:  # noqa: BLE001 - unknown kind, missing file or extra
            return f"--agents {spec!r}: " + " ".join(str(exc).split())
    return None


def bind(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host``:``port`` (``port`` 0: a free port the system picks; read it
    with ``getsockname``), not listening yet; OSError when the port is taken (EADDRINUSE) or the
    address is not this machine's."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn: a port in TIME_WAIT is free
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def url(host: str, port: int) -> str:
    """The address a browser on this machine opens for a server listening on ``host``:``port``
    (an unspecified address, 0.0.0.0 or ::, is reached at loopback)."""
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/"


def run(args: argparse.Namespace) -> int:
    """``bali serve`` with the options of ``bali``'s parser: check them (one line, exit 2), then
    serve until Ctrl-C; returns the exit code."""
    problem = check(args)
    if problem:
        print(f"bali serve: error: {problem}", file=sys.stderr)
        return 2
    import uvicorn

    from bali_env.apps.web.app import create_app

    hosts = list(dict.fromkeys([*LOOPBACK, "[::1]", args.host]))
    app = create_app(args.agents, args.results, hosts=hosts if args.host in LOOPBACK else ["*"])
    if args.host not in LOOPBACK:
        print(f"bali serve: listening on {args.host}: anyone who can reach this machine can use the app",
              file=sys.stderr)
    try:
        sock = bind(args.host, args.port)
    except OSError as exc:
        taken = exc.errno == errno.EADDRINUSE
        why = "is taken (another server listens there): choose another --port, or --port 0 for a free one" if taken \
            else f"cannot be listened on ({exc.strerror or exc})"
        print(f"bali serve: error: port {args.port} on {args.host} {why}", file=sys.stderr)
        return 2
    with sock:
        sock.listen(2048)  # connections wait from the moment the URL is printed (uvicorn accepts them)
        print(f"Bali web app: {url(args.host, sock.getsockname()[1])}" + (" (results: /results/)" if args.results
                                                                          else "") + "  (Ctrl-C to stop)", flush=True)
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
    return 0
