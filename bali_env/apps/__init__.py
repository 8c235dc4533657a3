"""What a person runs, on the top floor: it may import every room below.

| module | job |
|---|---|
| ``cli.py`` | the ``bali`` command: one parser, a subcommand per job, each handing over to its room; |
| | the flags several commands share are ``bali_env.flags``' parent parsers |
| ``session.py`` | ``TableSession``: a human at a table with bots, the game the terminal and the web app play |
| ``terminal.py`` | ``bali play``: a game in the terminal against bots |
| ``web/`` | ``bali serve``: the web app (play in the browser, browse tournament results) |
| ``replay.py`` | ``bali replay``: step through a saved game, or write it as a web page or a GIF |
| ``docgen.py`` | ``python -m bali_env.apps.docgen``: the observation page, regenerated from the spec |
"""

from __future__ import annotations
