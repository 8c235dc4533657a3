#!/usr/bin/env python3
"""A Bali bot in plain Python (standard library only), speaking the bot protocol of
docs/protocol.md over its standard input and output: it plays a random legal action, drawn from
the key bali sends with every decision (so a tournament plays the same games whatever the
workers), preferring VP at a shrine scoring.

    bali tournament --agents "cmd:python3 agents/random_bot.py" greedy --players 2 --games 20

Everything it prints goes to bali, one JSON object per line; its diagnostics go to standard
error (bali keeps them in a log file per participant).
"""

import json
import random
import sys


def answer(message):
    """The action id for one decision."""
    legal = [a["id"] for a in message["legal"]]
    if message["view"]["decision"] == "shrine_reward" and 39 in legal:
        return 39  # shrine reward: VP
    return random.Random(message.get("key", 0)).choice(legal)


def main():
    for raw in sys.stdin:
        message = json.loads(raw)
        kind = message["type"]
        if kind == "hello":
            reply = {"type": "hello", "name": "random-py", "version": 1}
        elif kind == "decide":
            reply = {"action": answer(message)}
        elif kind == "end":
            print(f"game {message.get('game')} over: {message.get('final_scores')}", file=sys.stderr)
            continue
        elif kind == "quit":
            return
        else:  # start: nothing to answer
            continue
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
