"""The generated documentation agrees with the code, and the README states its commands."""

from __future__ import annotations

from pathlib import Path

from bali_env.docgen import outdated

ROOT = Path(__file__).resolve().parent.parent


def test_generated_observation_docs_are_up_to_date():
    """docs/observation.md and the table in the bali_v0 docstring are exactly what
    `python -m bali_env.docgen` generates from the observation spec now."""
    assert outdated() == [], "regenerate with: python -m bali_env.docgen"


def test_docgen_notices_a_stale_page(tmp_path, monkeypatch):
    """The check can fail: a page that differs from the spec is reported."""
    import bali_env.docgen as D

    page = tmp_path / "observation.md"
    page.write_text((ROOT / "docs" / "observation.md").read_text().replace("| 3 |", "| 4 |", 1))
    monkeypatch.setattr(D, "OBSERVATION_PAGE", page)
    assert D.outdated() == [page]
    assert D.main(["--check"]) == 1


def test_nothing_points_outside_the_repository():
    """The rules live in docs/rules.md: no file cites a rules page or folder outside the repository."""
    offenders = []
    for path in ROOT.rglob("*"):
        if path.suffix not in (".py", ".md", ".toml", ".txt") or any(
            part.startswith(".") or part in ("build", "results", "runs") or part.endswith(".egg-info")
            for part in path.relative_to(ROOT).parts
        ):
            continue
        text = path.read_text(errors="replace")
        if "RULES" + ".md" in text or "../" + "shared" in text:
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == [], offenders


def test_readme_test_command_is_the_one_ci_runs():
    """.ci/run reads the line after the <!-- test-command --> marker; it must be a pytest run."""
    lines = (ROOT / "README.md").read_text().splitlines()
    i = lines.index("<!-- test-command -->")
    assert lines[i + 1].startswith("```")
    assert "pytest" in lines[i + 2]
