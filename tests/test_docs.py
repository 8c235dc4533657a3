"""The documentation tells the truth: every command shown in the README and the docs site parses,
every relative link leads to a file, the README's quick start runs and its test command is the one
CI runs, and the generated observation page agrees with the code."""

from __future__ import annotations

import argparse
import ast
import importlib
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from bali_env.apps.docgen import outdated

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# the README, the docs site and the pages beside the code: the example bots, the training recipes
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md")), ROOT / "agents" / "README.md",
         ROOT / "training" / "README.md"]
PROJECT_PACKAGES = ("bali_env", "benchmarks")
# placeholders the pages use inside commands, and a value of the right type for each
PLACEHOLDERS = {"N": "2", "K": "1", "COMMAND": "tournament"}
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
SPAN = re.compile(r"(?<!`)`([^`]+)`(?!`)")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _blocks(text: str) -> list[tuple[str, str]]:
    """The fenced code blocks of a Markdown page: (language, body)."""
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(text)]


def _shell_commands(body: str) -> list[str]:
    """The commands of a shell block: continuation lines joined, `&&` chains split."""
    lines = body.replace("\\\n", " ").splitlines()
    return [part.strip() for line in lines for part in line.split("&&") if part.strip()]


def _commands(page: Path) -> list[str]:
    """Every `bali ...` and `python -m ...` command of a page: in shell blocks, and in inline code
    (a usage line's `[--option]` brackets dropped; a span with `...` elided is not a command)."""
    text = page.read_text()
    found = [cmd for lang, body in _blocks(text) if lang in ("bash", "sh", "console")
             for cmd in _shell_commands(body)]
    for span in SPAN.findall(FENCE.sub("", text)):
        span = " ".join(span.split())
        if span.startswith(("bali ", "python -m ")) and "..." not in span:
            found.append(span.replace("[", "").replace("]", ""))
    return found


def _argv(command: str) -> list[str]:
    """The command's words, comments and leading VAR=value assignments dropped, placeholders filled."""
    words = shlex.split(command, comments=True)
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
        words = words[1:]
    return [PLACEHOLDERS.get(w, w) for w in words]


def _project_commands() -> list[tuple[str, list[str]]]:
    """(page: command, argv) for every command of this project the pages show."""
    out = {}
    for page in PAGES:
        for command in _commands(page):
            argv = _argv(command)
            if argv[:1] == ["bali"] or (argv[:2] == ["python", "-m"] and len(argv) > 2
                                        and argv[2].split(".")[0] in PROJECT_PACKAGES):
                out.setdefault(f"{page.relative_to(ROOT)}: {' '.join(shlex.split(command, comments=True))}", argv)
    return list(out.items())


class _Parsed(BaseException):
    """Raised in place of running a command once its own argument parser has accepted it."""


def _parse_module_command(module: str, args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Parse `python -m module args` without running it: call the module's `main(args)` and stop it
    when an argument parser has parsed exactly `args` (SystemExit(2) from argparse if it is bad)."""
    parse_args = argparse.ArgumentParser.parse_args

    def parse_then_stop(parser, argv=None, namespace=None):
        result = parse_args(parser, argv, namespace)
        if argv is not None and list(argv) == args:
            raise _Parsed()
        return result

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    with pytest.raises(_Parsed):
        importlib.import_module(module).main(args)


COMMANDS = _project_commands()


def test_the_pages_show_commands():
    """The command check below has something to check: the README's and the pages' main commands."""
    shown = [label for label, _ in COMMANDS]
    assert any(label.startswith("README.md: bali tournament") for label in shown)
    assert any("docs/training.md: bali train" in label for label in shown)
    assert any("python -m bali_env.trainers.evaluation.curve" in label for label in shown)
    assert any(label.startswith("training/README.md: bali fit-value") for label in shown)


@pytest.mark.parametrize("label,argv", COMMANDS, ids=[label for label, _ in COMMANDS])
def test_every_command_shown_parses(label, argv, monkeypatch, capsys):
    """Every `bali ...` and `python -m ...` command in the README and the docs parses with the
    options its command has today (a renamed or removed flag, a bad value or choice fails)."""
    from bali_env.apps.cli import command_parser, main, parse_command

    rest = argv[3:] if argv[0] == "python" else argv[1:]
    if rest in (["--version"], ["--help"]):
        assert main(rest) == 0
        return
    if len(rest) == 1 and argv[0] == "bali":  # a command named in the text (`bali replay`): it exists
        assert isinstance(command_parser(rest[0], []), argparse.ArgumentParser)
        return
    try:
        if argv[0] == "python":
            _parse_module_command(argv[2], rest, monkeypatch)
        else:
            assert isinstance(parse_command(rest), argparse.Namespace)
    except SystemExit as exc:
        if exc.code == 0 and "--help" in rest:
            return
        pytest.fail(f"{label}\ndoes not parse: {capsys.readouterr().err.strip()}")


def test_python_blocks_are_valid_python():
    """Every Python example in the README and the docs is valid Python."""
    for page in PAGES:
        for lang, body in _blocks(page.read_text()):
            if lang == "python" and not body.lstrip().startswith("--8<--"):
                ast.parse(body, filename=str(page))


def test_every_relative_link_leads_to_a_file():
    """Every relative link and image in the README and the docs points to an existing file."""
    broken = []
    for page in PAGES:
        text = FENCE.sub("", page.read_text())
        for target in LINK.findall(text):
            path = target.split("#")[0]
            if not path or re.match(r"[a-z]+:", path):
                continue
            if not (page.parent / path).exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert broken == []


ITEM = re.compile(r"^(- |\d+\. )")


def glued_lists(text: str) -> list[int]:
    """The lines (1-based) where a list starts right under a paragraph or a table, outside code
    blocks: the site's Markdown (Python-Markdown) then shows the items as text with dashes in
    the paragraph, or as rows of the table; a blank line before the list is what it needs."""
    lines, glued = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text).split("\n"), []
    for i, line in enumerate(lines[1:], start=1):
        if not ITEM.match(line):
            continue
        block = []
        for above in reversed(lines[:i]):
            if not above.strip():
                break
            block.append(above)
        if block and not any(ITEM.match(b) for b in block) and not block[0].startswith("#"):
            glued.append(i + 1)
    return glued


def test_glued_lists_are_found():
    """The check below finds a list under a paragraph and under a table, and passes a list
    after a blank line, a list's own items and continuation lines, and code blocks."""
    assert glued_lists("Text:\n- a\n- b\n") == [2]
    assert glued_lists("| a |\n|---|\n| 1 |\n- b\n") == [4]
    assert glued_lists("Text:\n\n- a\n  more of a\n- b\n1. c\n\n## Head\n- d\n") == []
    assert glued_lists("```bash\necho\n- not a list\n```\n") == []


def test_every_list_on_the_site_starts_after_a_blank_line():
    """A list on the documentation site is one: it is not glued to the paragraph or table above
    it (see ``glued_lists``)."""
    glued = [f"{page.relative_to(ROOT)}:{n}" for page in sorted((ROOT / "docs").rglob("*.md"))
             for n in glued_lists(page.read_text())]
    assert glued == []


def test_readme_fits_in_200_lines():
    """The README is the first screen, not the manual: at most 200 lines (the rest is in docs/)."""
    assert len(README.read_text().splitlines()) <= 200


def test_readme_test_command_is_the_one_ci_runs():
    """.ci/run extracts the line after the <!-- test-command --> marker: running its own extraction
    on the README gives the README's test command, which lints and runs every test."""
    extract = next(line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("cmd="))
    cmd = subprocess.run(["bash", "-c", f'{extract}\nprintf %s "$cmd"'], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    lines = README.read_text().splitlines()
    i = lines.index("<!-- test-command -->")
    assert lines[i + 1] == "```bash"
    assert cmd == lines[i + 2]
    assert "ruff check ." in cmd and "python -m pytest" in cmd and "--slow" in cmd


def _quick_start() -> list[str]:
    """The `bali tournament` command of the README's quick start (its first shell block)."""
    text = README.read_text()
    section = text[text.index("## Quick start"):]
    body = next(body for lang, body in _blocks(section) if lang == "bash")
    return next(_argv(cmd) for cmd in _shell_commands(body) if cmd.startswith("bali tournament"))


def test_quick_start_compiles_nothing_from_empty_caches(monkeypatch):
    """The README's first command is a run that plays interpreted while the kernels are not cached
    (a short run of cheap agents: no compiling, so it ends within seconds on a first run)."""
    from bali_env.apps.cli import build_parser
    from bali_env.arena import tournament as arena_run
    from bali_env.engine import GameConfig
    from bali_env.envs import batched

    args = build_parser().parse_args(_quick_start()[1:])
    monkeypatch.setattr(batched, "kernels_cached", lambda *a: False)
    game = GameConfig(args.players)
    assert arena_run._venue(list(args.agents), game, args.workers, args.games, False) == ("interpreted", args.workers)
    searching = [*args.agents[:-1], "mcts"]  # a search agent compiles: the check can tell
    assert arena_run._venue(searching, game, args.workers, args.games, False)[0] != "interpreted"


@pytest.mark.slow
def test_quick_start_runs(tmp_path):
    """The README's first command runs as printed and prints a table that names every participant,
    the shipped `ppo` among them."""
    argv = _quick_start()
    assert "ppo" in argv[argv.index("--agents") + 1:]
    run = subprocess.run([sys.executable, "-m", "bali_env.apps.cli", *argv[1:], "--out", str(tmp_path / "t"),
                          "--no-progress"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    agents = argv[argv.index("--agents") + 1: argv.index("--players")]
    rows = {line.split()[0].split("#")[0] for line in run.stdout.splitlines() if line.strip()}
    assert set(agents) <= rows, run.stdout
    assert (tmp_path / "t" / "results.json").exists()


def test_every_module_is_in_the_api_reference():
    """Every module of bali_env is on a page of docs/api (one page per room): named in a `::: module`
    entry, or inside a package whose entry shows its submodules (a new module goes on its room's page)."""
    entry = re.compile(r"^::: (\S+)\n((?:    .*\n)*)", re.M)
    named, packages = set(), set()
    for page in (ROOT / "docs" / "api").glob("*.md"):
        for name, options in entry.findall(page.read_text()):
            named.add(name)
            if "show_submodules: true" in options:
                packages.add(name)
    modules = {".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
               for path in (ROOT / "bali_env").rglob("*.py") if "__pycache__" not in path.parts}
    missing = sorted(m for m in modules if m not in named and not any(m.startswith(p + ".") for p in packages))
    assert missing == [], f"modules on no page of docs/api: {missing}"


def test_generated_observation_docs_are_up_to_date():
    """docs/observation.md and the table in the bali_v0 docstring are exactly what
    `python -m bali_env.apps.docgen` generates from the observation spec now."""
    assert outdated() == [], "regenerate with: python -m bali_env.apps.docgen"


def test_docgen_notices_a_stale_page(tmp_path, monkeypatch):
    """The check can fail: a page that differs from the spec is reported."""
    import bali_env.apps.docgen as D

    page = tmp_path / "observation.md"
    page.write_text((ROOT / "docs" / "observation.md").read_text().replace("| 3 |", "| 4 |", 1))
    monkeypatch.setattr(D, "OBSERVATION_PAGE", page)
    assert D.outdated() == [page]
    assert D.main(["--check"]) == 1


@pytest.mark.slow
def test_nothing_points_outside_the_repository():
    """The rules live in docs/rules.md: no file cites a rules page or folder outside the repository."""
    offenders = []
    for path in ROOT.rglob("*"):
        if path.suffix not in (".py", ".md", ".toml", ".txt") or any(
            part.startswith(".") or part in ("build", "results", "runs", "site") or part.endswith(".egg-info")
            for part in path.relative_to(ROOT).parts
        ):
            continue
        text = path.read_text(errors="replace")
        if "RULES" + ".md" in text or "../" + "shared" in text:
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == [], offenders


# ------------------------------------------------------------------ user pages and research notes
DOCS = ROOT / "docs"
RESEARCH = DOCS / "research"
#: the pages a user reads: the README and every page of the site outside the research notes and the
#: generated API reference
USER_PAGES = [README, *sorted(p for p in DOCS.rglob("*.md") if p.relative_to(DOCS).parts[0] not in ("research", "api"))]
USER_WORDS = 30_000  #: the most words the user pages may hold together (a whitespace split of the Markdown)
MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
DIARY = re.compile(rf"\b[Ii]ssues? #?\d+|(?<![\w#])#\d+\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}} (?:{MONTHS})\b"
                   rf"|\b(?:{MONTHS}) \d{{1,2}}(?:st|nd|rd|th)?\b|\b(?:{MONTHS}) \d{{4}}\b|\b[Tt]his session\b")


def diary_marks(text: str) -> list[str]:
    """What in ``text`` belongs to the research record, not a user page: an issue number ("Issue
    12", "#12"), an ISO date, a date with a month's name, "this session"."""
    return [m.group(0) for m in DIARY.finditer(text)]


def test_diary_marks_are_found():
    """The check below finds issue numbers and dates, and passes the numbers a user page holds."""
    assert diary_marks("as Issue 12 asked, see issue 3 and #45") == ["Issue 12", "issue 3", "#45"]
    assert diary_marks("measured on 2026-11-28, on 3 November, on November 3rd, in May 2026") == [
        "2026-11-28", "3 November", "November 3rd", "May 2026"]
    assert diary_marks("run earlier this session") == ["this session"]
    assert diary_marks("72.5% [70.4, 74.5] of 1,800 games, seed 20,000, 128x128, `results/<date-time>/`, "
                       "the issue's goal, [a](page.md#the-first-run), May the best win") == []


def test_user_pages_hold_no_issue_numbers_or_diary_dates():
    """The user pages say what to do and what to expect: the issues and the dates of the record
    are in the research notes (docs/research/), not here."""
    found = {str(page.relative_to(ROOT)): marks for page in USER_PAGES if (marks := diary_marks(page.read_text()))}
    assert found == {}, f"move these to docs/research/: {found}"


def user_words(pages: list[Path]) -> int:
    """The words of ``pages`` together: a whitespace split of their Markdown."""
    return sum(len(page.read_text().split()) for page in pages)


def test_the_user_pages_stay_short():
    """The README and the user pages together hold at most USER_WORDS words (the record goes to the
    research notes); the count covers every user page, the README and the training page among them."""
    names = {str(page.relative_to(ROOT)) for page in USER_PAGES}
    assert {"README.md", "docs/training.md", "docs/getting-started.md", "docs/environment.md"} <= names
    assert not any(name.startswith(("docs/research/", "docs/api/")) for name in names)
    assert user_words(USER_PAGES) <= USER_WORDS, f"{user_words(USER_PAGES):,} words on the user pages"


def test_a_long_page_is_counted(tmp_path):
    """The word count sees a page that grows: one more page of USER_WORDS words goes over the limit."""
    page = tmp_path / "long.md"
    page.write_text("word " * USER_WORDS)
    assert user_words([page]) == USER_WORDS and user_words([*USER_PAGES, page]) > USER_WORDS


def _nav_pages(nav: object) -> list[str]:
    """Every page file named in an mkdocs ``nav`` (nested lists of {title: page or section})."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [p for value in nav.values() for p in _nav_pages(value)]
    if isinstance(nav, list):
        return [p for item in nav for p in _nav_pages(item)]
    return []


def research_gaps(nav: object, notes: list[str], index_text: str) -> list[str]:
    """The research notes (file names in docs/research/) missing from the site's ``nav`` or not
    linked from the research index's text."""
    listed = set(_nav_pages(nav))
    gaps = [f"{note}: not in mkdocs.yml's nav" for note in notes if f"research/{note}" not in listed]
    linked = {target.split("#")[0] for target in LINK.findall(index_text)}
    return gaps + [f"{note}: not linked from research/index.md" for note in notes
                   if note != "index.md" and note not in linked]


def test_every_research_note_is_on_the_site_and_in_its_index():
    """Each page of docs/research/ is in mkdocs.yml's nav (under the research notes) and the
    research index links it, so no note is only reachable by its address."""
    import yaml

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    notes = sorted(p.name for p in RESEARCH.glob("*.md"))
    assert {"index.md", "alphazero.md", "training-history.md"} <= set(notes)
    assert research_gaps(nav, notes, (RESEARCH / "index.md").read_text()) == []


def test_a_research_note_left_out_is_found():
    """The check itself: a note missing from the nav, and one the index does not link, are named."""
    nav = [{"Research notes": [{"Index": "research/index.md"}, {"A": "research/a.md"}]}]
    assert research_gaps(nav, ["index.md", "a.md", "b.md"], "[A](a.md) [B](b.md#x)") == [
        "b.md: not in mkdocs.yml's nav"]
    assert research_gaps(nav, ["index.md", "a.md"], "[B](b.md)") == ["a.md: not linked from research/index.md"]


def test_the_commands_table_names_every_command():
    """docs/playing.md's table of commands has a row for every `bali` subcommand the CLI defines."""
    from bali_env.apps.cli import commands

    text = (DOCS / "playing.md").read_text()
    rows = set(re.findall(r"^\| `bali ([a-z-]+)` \|", text, re.M))
    assert rows, "docs/playing.md lost its table of commands"
    assert sorted(set(commands()) - rows) == [], "add these commands to the table in docs/playing.md"
    assert sorted(rows - set(commands())) == [], "the table names commands the CLI does not have"


def test_the_documented_imports_work():
    """`from bali_env import BaliVectorEnv` (environment.md) works, is the batched engine, and is
    imported on first use only: `import bali_env` alone does not load the batched env module."""
    code = ("import sys, bali_env\n"
            "assert 'bali_env.envs.batched' not in sys.modules\n"
            "assert 'BaliVectorEnv' in dir(bali_env) and 'BaliVectorEnv' in bali_env.__all__\n"
            "from bali_env import BaliVectorEnv\n"
            "from bali_env.envs.batched import BaliVectorEnv as direct\n"
            "assert BaliVectorEnv is direct is bali_env.BaliVectorEnv\n"
            "try:\n    bali_env.NoSuchName\nexcept AttributeError as exc:\n    assert 'NoSuchName' in str(exc)\n"
            "else:\n    raise SystemExit('no AttributeError')\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr


def _imports_shown(page: Path) -> list[str]:
    """The `import ...` and `from ... import ...` lines of the Python blocks of a page that import
    from this project."""
    return [line.split("#")[0].strip() for lang, body in _blocks(page.read_text()) if lang == "python"
            for line in body.splitlines()
            if re.match(r"\s*(from bali_env[\w.]* import |import bali_env)", line)]


def test_every_import_a_user_page_shows_works():
    """Each import of this project that a user page's Python example shows resolves (a name moved
    to another module, or a lazy export dropped, fails here)."""
    shown = {(str(page.relative_to(ROOT)), line) for page in USER_PAGES for line in _imports_shown(page)}
    assert ("docs/environment.md", "from bali_env import BaliVectorEnv") in shown
    failed = []
    for page, line in sorted(shown):
        try:
            exec(line, {})
        except ImportError as exc:
            failed.append(f"{page}: {line}: {exc}")
    assert failed == []
