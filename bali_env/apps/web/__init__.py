"""The web app (``bali serve``): play Bali in the browser against the bots, and browse tournament
results. Starlette (routes) on uvicorn (the server); the page is plain HTML, CSS and JavaScript
with no build step, and every picture comes from ``bali_env.pictures``.

| module | job |
|---|---|
| ``tables.py`` | ``GameSession`` / ``GameStore``: the games open at once, built from the human's view only |
| ``results.py`` | ``ResultsFolder``: the tournament runs under a folder, their pages and replays |
| ``app.py`` | ``create_app``: the routes, 4xx answers for bad requests, the allowed host names |
| ``serve.py`` | ``bali serve``: options checked, then uvicorn on loopback |
| ``static/`` | the play page: ``index.html``, ``app.js``, ``app.css`` |
"""

from __future__ import annotations

__all__: list[str] = []
