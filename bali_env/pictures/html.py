"""The HTML replay: ``replay_html(record)`` writes ONE self-contained page (no network, no server;
it opens from disk) with the picture of every step, step buttons, a slider, the arrow keys,
autoplay at a chosen speed, the move log (the current move highlighted, every move clickable,
turns and scorings announced), the final scores and, at the last step, the final scoring item by
item (``narrate.final_scoring_text``, the words ``bali play`` prints).

The page holds only what its viewer knew (``frames.Spectator``): a seat's page is built from
that seat's observations, its move log describes the others' hidden moves as the table saw them,
and nothing else of the record goes in (not the seed, nor the deal options, which would give
the deck away). Its size: the pictures repeat most of their elements from step to step, so the
page stores each distinct element once, each distinct group of elements once, and a frame as the
list of its groups; the player script puts a frame together on the fly (``assets/replay.js``).
"""

from __future__ import annotations

import json
from html import escape
from importlib import resources
from typing import Any

from bali_env.engine.state import absolute_seat

from bali_env.pictures.frames import Frame, Spectator, frame_parts, labels_for, record_frames
from bali_env.pictures.narrate import final_scoring_text, result_text
from bali_env.pictures.style import DEFS
from bali_env.pictures.svg import SVG_CLOSE, SVG_OPEN, svg_elements


def _asset(name: str) -> str:
    return (resources.files(__package__) / "assets" / name).read_text(encoding="utf-8")


class _Table:
    """Distinct strings (or tuples) numbered in order of first appearance."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}

    def __call__(self, item: Any) -> int:
        return self.index.setdefault(item, len(self.index))

    def items(self) -> list[Any]:
        return list(self.index)


def replay_data(frames: list[Frame], spectator: Spectator) -> dict[str, Any]:
    """The data of a replay page: the distinct SVG elements, the distinct groups (lists of
    element ids), each frame as its list of group ids, the move log and the result."""
    elements, groups = _Table(), _Table()
    frame_groups = []
    for frame in frames:
        ids = [groups(tuple(elements(e) for e in svg_elements(part))) for part in frame_parts(frame, spectator)]
        frame_groups.append(ids)
    n = len(spectator.labels)
    me = 0 if spectator.seat is None else spectator.seat
    turn, current, log = 0, -1, []
    for before, frame in zip(frames, frames[1:], strict=False):
        active = absolute_seat(me, before.view.active, n)  # the move belongs to the turn of the player active before it
        if active != current:
            turn, current = turn + 1, active
        log.append({"turn": turn, "active": spectator.labels[active], "text": frame.move or "",
                    "events": list(frame.events)})
    return {
        "elements": elements.items(),
        "groups": [list(g) for g in groups.items()],
        "frames": frame_groups,
        "log": log,
        "result": result_text(frames[-1].final, spectator.labels, len(frames) - 1),
        "scoring": final_scoring_text(frames[-1].final, frames[-1].view, spectator.seat, spectator.labels)
        if frames[-1].final is not None else "",
    }


def replay_page(frames: list[Frame], spectator: Spectator, title: str, back: str | None = None) -> str:
    """The self-contained HTML page of ``frames`` seen by ``spectator`` (``title`` names the
    game, e.g. the record's file name; ``back``: a relative link to a page listing the games)."""
    data = replay_data(frames, spectator)
    data["open"] = SVG_OPEN
    payload = json.dumps(data, separators=(",", ":"), ensure_ascii=True).replace("<", "\\u003c").replace(
        ">", "\\u003e").replace("&", "\\u0026")
    first = SVG_OPEN + "".join(frame_parts(frames[0], spectator)) + SVG_CLOSE
    players = ", ".join(spectator.labels)
    head = f"Bali replay: {title}"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><link rel=\"icon\" href=\"data:,\">"
        f"<title>{escape(head)} ({escape(spectator.viewpoint())})</title>"
        f"<style>{_asset('replay.css')}</style></head><body>"
        f"<header><h1>{escape(head)}</h1><span class=\"sub\">{escape(spectator.viewpoint())} \N{MIDDLE DOT} "
        f"{escape(players)}</span>"
        + (f"<a class=\"back\" href=\"{escape(back, quote=True)}\">\u2190 all games</a>" if back else "")
        + "</header>"
        f"<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\">{DEFS}</svg>"
        "<main><section aria-label=\"table\"><div id=\"stage\" role=\"img\" aria-label=\"the table at this step\">"
        f"{first}</div>"
        "<div id=\"controls\"><button id=\"first\" type=\"button\" title=\"start (Home)\">\u00ab start</button>"
        "<button id=\"prev\" type=\"button\" title=\"previous move (left arrow)\">\u25c0 back</button>"
        "<button id=\"play\" type=\"button\" aria-pressed=\"false\" title=\"autoplay (space)\">\u25b6 play</button>"
        "<button id=\"next\" type=\"button\" title=\"next move (right arrow)\">next \u25b6</button>"
        "<button id=\"last\" type=\"button\" title=\"end (End)\">end \u00bb</button>"
        f"<input id=\"slider\" type=\"range\" min=\"0\" max=\"{len(frames) - 1}\" value=\"0\" aria-label=\"move\">"
        "<label>speed <select id=\"speed\" aria-label=\"autoplay speed\"><option value=\"0.5\">0.5 moves/s</option>"
        "<option value=\"1\">1 move/s</option><option value=\"2\" selected>2 moves/s</option>"
        "<option value=\"4\">4 moves/s</option><option value=\"10\">10 moves/s</option></select></label>"
        "<span id=\"counter\" aria-live=\"polite\"></span></div>"
        "<div id=\"announce\" aria-live=\"polite\"></div>"
        "<pre id=\"scoring\" hidden></pre>"
        "<p class=\"legend\">Offering cards: <b>2</b> = exactly 2; <b>1\u20133</b> = at least 1, at most 3 (what this "
        "viewer cannot know: another player's face-down offering or oracle take). <b>?</b> = an altar card of unknown "
        "category. At the end the final scoring shows every offering card and counts the altar.</p></section>"
        "<aside aria-label=\"moves\"><h2>Moves</h2><ol id=\"log\"></ol></aside></main>"
        f"<script type=\"application/json\" id=\"replay-data\">{payload}</script>"
        f"<script>{_asset('replay.js')}</script></body></html>\n"
    )


def replay_html(record: dict[str, Any], seat: int | None = None, reveal: bool = False, title: str = "a game",
                back: str | None = None) -> str:
    """The HTML replay page of a game record (``bali_env.envs.records``) as ``seat`` saw it (None: the
    public table; ``reveal``: everything, after the game); ``back`` links to a list of games."""
    spectator = Spectator(labels_for(record["num_players"], record.get("agents")), seat, reveal)
    return replay_page(record_frames(record, seat, reveal), spectator, title, back)


__all__ = ["replay_data", "replay_html", "replay_page"]

