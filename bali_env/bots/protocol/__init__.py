"""Bots in any language: a program that speaks the bot protocol (docs/protocol.md: JSON lines over
its standard input and output) plays as the agent ``cmd:PROGRAM ARGS`` in every command that
takes agents (tournaments, ``bali play``, ``bali serve``, training opponents), under a clock,
and loses the game it was playing when it times out, crashes, answers an illegal action or
breaks the protocol.

| module | job |
|---|---|
| ``messages.py`` | the messages, the view by name, the answers' models (``BotHello``, ``ANSWER``), ``BotFault`` |
| ``process.py`` | ``BotProcess``: the program as a process, non-blocking pipes, the clock, a line sent unasked, kill |
| ``guard.py`` | the guard each bot runs under: it kills the bot's process group when bali closes it or dies |
| ``command_agent.py`` | ``CommandAgent``: the ``cmd:`` agent; ``parse_command`` |
| ``schema.py`` | every message as a strict model, and the JSON Schema generated from them (docs/protocol.schema.json) |
"""

from __future__ import annotations

from bali_env.bots.protocol.command_agent import DEFAULT_MOVE_TIME, CommandAgent, parse_command
from bali_env.bots.protocol.messages import FAULTS, PROTOCOL, VERSION, BotFault

__all__ = ["DEFAULT_MOVE_TIME", "FAULTS", "PROTOCOL", "VERSION", "BotFault", "CommandAgent", "parse_command"]
