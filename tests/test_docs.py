"""The generated documentation agrees with the code, and the README states its commands."""

from __future__ import annotations

from pathlib import Path

from bali_env.docgen import observation_markdown

ROOT = Path(__file__).resolve().parent.parent


def test_observation_page_is_up_to_date():
    """docs/observation.md is exactly what `python -m bali_env.docgen` generates now."""
    assert (ROOT / "docs" / "observation.md").read_text() == observation_markdown(), (
        "regenerate with: python -m bali_env.docgen > docs/observation.md"
    )


def test_readme_test_command_is_the_one_ci_runs():
    """.ci/run reads the line after the <!-- test-command --> marker; it must be a pytest run."""
    lines = (ROOT / "README.md").read_text().splitlines()
    i = lines.index("<!-- test-command -->")
    assert lines[i + 1].startswith("```")
    assert "pytest" in lines[i + 2]
