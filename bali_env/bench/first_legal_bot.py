#!/usr/bin/env python3
"""The trivial bot of the protocol benchmark (``bali_env.bench.bots``): it answers every decision with
its first legal action, reading each message with the standard library's JSON parser. With
``--lean`` it asks in its hello for the legal actions only (no view, no observation vector)."""

import json
import sys


def main() -> None:
    """Answer hello, then every decision, until quit."""
    out = sys.stdout
    fields = "[]" if "--lean" in sys.argv[1:] else '["view","observation"]'
    for raw in sys.stdin:
        message = json.loads(raw)
        kind = message["type"]
        if kind == "decide":
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
