"""The web app's routes (Starlette): the play page and its two assets, the game API, and the
results folder. Nothing else is served.

| route | what |
|---|---|
| ``GET /`` | the play page (``static/index.html``) |
| ``GET /static/app.js``, ``/static/app.css`` | its script and style |
| ``GET /api/setup`` | the opponents a game may have, the player counts |
| ``POST /api/games`` | start a game: ``{"players", "seat", "opponents", "oracle", "demon", "seed"}`` |
| ``GET /api/games/{id}`` | the game as the human sees it (picture, options, log, result) |
| ``POST /api/games/{id}/move`` | the human's move: ``{"action": id}`` |
| ``POST /api/games/{id}/advance`` | one bot move (the page calls it to show the bots' moves one by one) |
| ``GET /results/`` | the runs in the results folder (with ``--results``) |
| ``GET /results/{run}/``, ``.../ratings.png``, ``.../replays/game_NNNNN.html`` | a run's pages |

A bad request gets a 4xx answer with ``{"error": ...}`` (JSON routes) and never stops the
server; a request for a host other than the one served is refused (400), so that another web
page cannot reach the app through a rebound domain name.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from bali_env.apps.web.tables import GameError, GameStore, Move, parse
from bali_env.apps.web.results import ResultsFolder, runs_page

STATIC = ("index.html", "app.js", "app.css")
_TYPES = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"}
_REPLAY = re.compile(r"^(.+)/replays/(game_[0-9]+)\.html$")
MAX_BODY = 64_000  #: bytes of a JSON request body


def _static(name: str) -> str:
    return (resources.files(__package__) / "static" / name).read_text(encoding="utf-8")


class _Handlers:
    """The route handlers, over one game store and (optionally) one results folder."""

    def __init__(self, extra_specs: list[str] | None, results: str | Path | None) -> None:
        self.store = GameStore(extra_specs)
        self.folder = ResultsFolder(results) if results is not None else None
        self.assets = {name: _static(name) for name in STATIC}

    async def page(self, request: Request) -> Response:
        return HTMLResponse(self.assets["index.html"])

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _TYPES:
            raise GameError("not found", 404)
        return Response(self.assets[name], media_type=_TYPES[name])

    async def setup(self, request: Request) -> Response:
        return JSONResponse({"opponents": self.store.choices, "players": [2, 3, 4],
                             "results": self.folder is not None})

    async def new_game(self, request: Request) -> Response:
        settings = await _json(request)
        session = await run_in_threadpool(self.store.new_game, settings)
        return JSONResponse(session.snapshot(), status_code=201)

    async def game(self, request: Request) -> Response:
        session = self.store.get(request.path_params["game_id"])
        return JSONResponse(await run_in_threadpool(_locked, session, lambda: None))

    async def move(self, request: Request) -> Response:
        move = parse(Move, await _json(request))
        session = self.store.get(request.path_params["game_id"])
        return JSONResponse(await run_in_threadpool(_locked, session, lambda: session.human_move(move.action)))

    async def advance(self, request: Request) -> Response:
        session = self.store.get(request.path_params["game_id"])
        return JSONResponse(await run_in_threadpool(_locked, session, session.bot_move))

    def results(self) -> ResultsFolder:
        if self.folder is None:
            raise GameError("no results folder: start the server with --results DIR", 404)
        return self.folder

    async def results_list(self, request: Request) -> Response:
        return HTMLResponse(runs_page(self.results()))

    async def results_run(self, request: Request) -> Response:
        f, path = self.results(), request.path_params["path"]
        if path.endswith("/"):
            return HTMLResponse(f.index(path[:-1]))
        if path.endswith("/ratings.png"):
            return FileResponse(f.chart(path[: -len("/ratings.png")]), media_type="image/png")
        replay = _REPLAY.match(path)
        if replay:
            return HTMLResponse(await run_in_threadpool(f.replay, replay.group(1), replay.group(2)))
        f.run_dir(path)  # a run without its final slash: GameError (404) if there is no such run
        return Response(status_code=307, headers={"location": f"/results/{path}/"})


async def _error(request: Request, exc: Exception) -> Response:
    """Every refused request: its status and ``{"error": message}``."""
    if isinstance(exc, GameError):
        return JSONResponse({"error": str(exc)}, status_code=exc.status)
    status = getattr(exc, "status_code", 400)
    words = {404: "not found", 405: "method not allowed"}.get(status, str(getattr(exc, "detail", "bad request")))
    return JSONResponse({"error": words}, status_code=status)


def create_app(extra_specs: list[str] | None = None, results: str | Path | None = None,
               hosts: list[str] | None = None) -> Starlette:
    """The web app: games against the built-in bots and ``extra_specs`` (agent specs checked by
    the caller), and the tournament runs under ``results`` if given. ``hosts``: the host names
    requests may name (default: the loopback names)."""
    h = _Handlers(extra_specs, results)
    routes = [
        Route("/", h.page),
        Route("/static/{name}", h.static),
        Route("/api/setup", h.setup),
        Route("/api/games", h.new_game, methods=["POST"]),
        Route("/api/games/{game_id}", h.game),
        Route("/api/games/{game_id}/move", h.move, methods=["POST"]),
        Route("/api/games/{game_id}/advance", h.advance, methods=["POST"]),
        Route("/results/", h.results_list),
        Route("/results", lambda request: Response(status_code=307, headers={"location": "/results/"})),
        Route("/results/{path:path}", h.results_run),
    ]
    allowed = hosts or ["127.0.0.1", "localhost", "::1", "[::1]", "testserver"]
    app = Starlette(routes=routes, middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=allowed)],
                    exception_handlers={GameError: _error, 404: _error, 405: _error})
    app.state.games = h.store
    return app


def _locked(session: Any, action: Any) -> dict[str, Any]:
    """Run ``action`` on the session under its lock (one move at a time per game), then return
    the session's snapshot."""
    with session.lock:
        action()
        return session.snapshot()


async def _json(request: Request) -> Any:
    """The request's JSON body; GameError (400/413) for a body that is not JSON or too large."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise GameError("request body too large", 413)
    try:
        return json.loads(body or b"null")
    except (ValueError, RecursionError):
        raise GameError("the request body is not JSON") from None


__all__ = ["STATIC", "create_app"]
