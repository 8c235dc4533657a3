#!/usr/bin/env python3
"""The trivial bot of the protocol benchmark (``bali_env.speed.bot_protocol``): it answers every decision with
its first legal action, reading each message with the standard library's JSON parser. With
``--lean`` it asks in its hello for the legal actions only (no view, no observation vector). With
``--hang-every N`` it never answers its N-th, 2N-th, ... decision (``bali bench``'s tournament
against a bot that hangs: every such game is forfeited on the clock)."""

import json
import sys
import time


def main() -> None:
    """Answer hello, then every decision, until quit."""
    out = sys.stdout
    args = sys.argv[1:]
    fields = "[]" if "--lean" in args else '["view","observation"]'
    hang_every = int(args[args.index("--hang-every") + 1]) if "--hang-every" in args else 0
    decisions = 0
    for raw in sys.stdin:
        message = json.loads(raw)
        kind = message["type"]
        if kind == "decide":
            if hang_every:
                decisions += 1
                if decisions % hang_every == 0:
                    print(f"hanging at decision {decisions}", file=sys.stderr, flush=True)
                    time.sleep(3600)
            out.write(f'{{"action":{message["legal"][0]["id"]}}}\n')
        elif kind == "hello":
            out.write(f'{{"type":"hello","name":"first-legal","version":1,"fields":{fields}}}\n')
        elif kind == "quit":
            return
        else:
            continue
        out.flush()


if __name__ == "__main__":
    main()
