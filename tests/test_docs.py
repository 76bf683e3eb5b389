"""The README and the documentation site: the README stays short, the version the code
reports is pyproject's, and every registered game has a docs page that includes its rules
from the game's own folder (``make docs`` builds the site itself, with --strict, in CI)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import games

ROOT = Path(__file__).resolve().parent.parent
MAX_README_LINES = 200


def pyproject_version() -> str:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    project = text.split("[project]", 1)[1].split("\n[", 1)[0]
    match = re.search(r'^version\s*=\s*"([^"]+)"', project, re.MULTILINE)
    assert match, "pyproject.toml's [project] has no version"
    return match.group(1)


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines; the rest belongs in docs/"


def test_readme_links_to_existing_files():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (ROOT / target).exists(), f"README.md links to {target}, which does not exist"


def test_core_version_is_pyprojects():
    import core

    assert core.__version__ == pyproject_version()


@pytest.mark.parametrize("cli", ["train", "play"])
def test_cli_version(cli):
    result = subprocess.run(
        [sys.executable, "-m", cli, "--version"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"python -m {cli} (dice-arena) {pyproject_version()}"


def test_every_game_has_a_page_with_its_rules():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = {path: path.read_text(encoding="utf-8") for path in (ROOT / "docs").rglob("*.md")}
    for name in games.names():
        package = games.get(name).engine.__module__.rsplit(".", 1)[0]  # games.pig.game -> games.pig
        if not package.startswith("games."):
            continue  # a plug-in game of another package documents itself
        rules = package.replace(".", "/") + "/rules.md"
        assert (ROOT / rules).is_file(), f"game {name}: no rules page {rules}"
        including = [path for path, text in pages.items() if f'--8<-- "{rules}"' in text]
        assert including, f"game {name}: no page of docs/ includes {rules}"
        for path in including:
            assert path.relative_to(ROOT / "docs").as_posix() in nav, f"{path} is not in mkdocs.yml's nav"


def test_no_reference_to_the_old_rules_paths():
    old = ("docs/rules420.md", "docs/rules421.md")
    texts = [ROOT / "README.md", ROOT / "mkdocs.yml", *(ROOT / "docs").rglob("*.md")]
    for path in texts:
        text = path.read_text(encoding="utf-8")
        for name in old:
            assert name not in text, f"{path} still names {name} (the rules are in games/<name>/rules.md)"
