#!/usr/bin/env python3
"""A bot that breaks the protocol on purpose, for the fault tests (a test helper, not in the wheel;
``bali bench``'s hanging bot is ``first_legal_bot.py --hang-every 10``): ``faulty_bot.py MODE EVERY``
plays a legal action (the first) except on every EVERY-th decision of a process, where it
misbehaves as MODE says; ``faulty_bot.py MODE EVERY GAMES`` misbehaves instead at its decision
number EVERY of every game whose id is a multiple of GAMES (the same games whatever the
workers, the batching or a resume). MODE: ``hang`` (never answers), ``crash`` (exits with code 3), ``illegal``
(answers action 99), ``garbage`` (answers a line that is not JSON), ``flood`` (writes 200 kB with
no newline), ``chatty`` (writes two lines). ``nohello``: never answers hello; ``oldhello``:
answers hello with version 0; ``slow``: takes 20 ms every decision."""

import json
import sys
import time

mode, every = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1
games = int(sys.argv[3]) if len(sys.argv) > 3 else None
decisions = 0
for raw in sys.stdin:
    message = json.loads(raw)
    if message["type"] == "hello":
        if mode == "nohello":
            time.sleep(3600)
        version = 0 if mode == "oldhello" else 1
        sys.stdout.write(json.dumps({"type": "hello", "name": f"faulty-{mode}", "version": version}) + "\n")
    elif message["type"] == "decide":
        decisions += 1
        legal = message["legal"][0]["id"]
        if mode == "slow":  # every decision takes 20 ms: a game budget runs out
            time.sleep(0.02)
        if games is None:
            due = decisions % every == 0
        else:
            due = message["decision"] == every and message["game"] is not None and message["game"] % games == 0
        if due:
            print(f"misbehaving ({mode}) at decision {decisions}", file=sys.stderr, flush=True)
            if mode == "hang":
                time.sleep(3600)
            elif mode == "crash":
                sys.exit(3)
            elif mode == "illegal":
                legal = 99
            elif mode == "garbage":
                sys.stdout.write("take column zero, please\n")
                sys.stdout.flush()
                continue
            elif mode == "flood":
                sys.stdout.write("x" * 200_000)
                sys.stdout.flush()
                time.sleep(3600)
            elif mode == "chatty":
                sys.stdout.write("thinking...\n")
        sys.stdout.write(json.dumps({"action": legal}) + "\n")
    elif message["type"] == "quit":
        break
    sys.stdout.flush()
