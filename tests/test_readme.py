"""The README stays true: its first lines are the two commands CI and newcomers run, it describes every page in
the navigation, its pictures exist, and it says why each dependency is there."""
import re
import tomllib
from pathlib import Path

from app import catalog

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_first_lines_are_the_two_commands_and_ci_runs_the_second():
    first_block = re.search(r"```bash\n(.*?)```", README, re.S)
    assert first_block and README.index("```bash") < 40, "the two commands come first"
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines() if line.strip()]
    assert commands == ["bash scripts/dev.sh run", "bash scripts/dev.sh test"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "exec bash scripts/dev.sh test" in ci


def test_every_page_of_the_navigation_is_described():
    for page in catalog.PAGES[1:]:
        assert f"(`/{page['url']}`)" in README, page["url"]


def test_every_picture_the_readme_shows_exists():
    for path in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README):
        assert (ROOT / path).is_file(), path


def test_every_dependency_is_explained():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = [re.split(r"[<>=!~ \[]", d)[0] for d in project["dependencies"]]
    names += [re.split(r"[<>=!~ \[]", d)[0] for deps in project["optional-dependencies"].values() for d in deps]
    table = README[README.index("## Dependencies"):]
    for name in names:
        assert re.search(rf"^\|[^|\n]*\b{re.escape(name)}\b", table, re.M), name
