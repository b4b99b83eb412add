"""The tree checks can fail: scripts/check_map.py when a file the map names is gone, and
scripts/release_check.py when a client's version differs from the extension's. Each runs on a
temporary copy of the parts of the tree it reads, broken on purpose. Run by the fast tier
(scripts/test.sh --fast), with no PostgreSQL.
"""
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_map = load("check_map")
release_check = load("release_check")


def run(script, *args):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / script), *map(str, args)],
                          capture_output=True, text=True)


# check_map.py


@pytest.fixture(scope="module")
def files():
    return check_map.tracked(ROOT)


@pytest.fixture(scope="module")
def development():
    return (ROOT / "docs" / "DEVELOPMENT.md").read_text(encoding="utf-8")


@pytest.fixture
def tree_copy(tmp_path, files):
    """A git directory holding an empty file for each file of the tree, and DEVELOPMENT.md."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for f in files:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).touch()
    shutil.copy(ROOT / "docs" / "DEVELOPMENT.md", tmp_path / "docs" / "DEVELOPMENT.md")
    return tmp_path


def test_the_map_passes_on_the_tree():
    result = run("check_map.py", ROOT)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("gone", [
    # The three that the suffix match let through (issue 35), and a name that many files share.
    ["crates/idgen-core/src/xid.rs", "crates/idgen-core/src/snowflake/state.rs", "src/snowflake/mark.rs"],
    ["crates/idgen-core/src/snowflake/mod.rs"],
    ["clients/rust/src/lib.rs"],
    ["crates/idgen-core/src/rapkey/tests.rs"],
    ["tests/vectors/README.md"],
    ["clients/rust/tests/registry.rs"],
])
def test_a_removed_file_fails_the_map(tree_copy, gone):
    assert run("check_map.py", tree_copy).returncode == 0
    for f in gone:
        (tree_copy / f).unlink()
    result = run("check_map.py", tree_copy)
    assert result.returncode == 1
    for f in gone:
        assert f"`{Path(f).name}` does not exist" in result.stderr or f"`{f}` does not exist" in result.stderr


def test_removing_any_file_or_directory_the_map_names_fails_it(development, files):
    resolved = {found[0] for _, _, found in check_map.Resolver(files).names(development) if len(found) == 1}
    assert len(resolved) > 150, "the map names fewer paths than it does today: is the parser reading it?"
    assert check_map.problems(development, files) == []
    passing = []
    for path in sorted(resolved):
        left = [f for f in files if not (f.startswith(path) if path.endswith("/") else f == path)]
        if not check_map.problems(development, left):
            passing.append(path)
    assert passing == [], "removing these leaves check_map.py passing"


def test_a_name_in_two_places_fails_the_map(development, files):
    # The core's `snowflake/` (`mark.rs`) in the map, with a mark.rs beside snowflake/ too.
    more = files + ["crates/idgen-core/src/mark.rs"]
    assert any("could be any of" in p and "mark.rs" in p for p in check_map.problems(development, more))


# release_check.py

RELEASE_FILES = ["Cargo.toml", "Cargo.lock", "pg_idgen.control", "META.json", "CHANGELOG.md", "README.md",
                 "sql", "scripts/lib.sh"] + sorted({path for path, _ in release_check.CLIENT_VERSIONS})


@pytest.fixture
def release_copy(tmp_path):
    for name in RELEASE_FILES:
        src, dst = ROOT / name, tmp_path / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dst)
    return tmp_path


def version():
    return re.search(r'^\[package\][^\[]*?^version = "([^"]+)"', (ROOT / "Cargo.toml").read_text(), re.M | re.S)[1]


def test_the_release_check_passes_on_the_tree(release_copy):
    result = run("release_check.py", release_copy)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("path,pattern", release_check.CLIENT_VERSIONS)
def test_a_client_with_another_version_fails_the_release_check(release_copy, path, pattern):
    f = release_copy / path
    text = f.read_text(encoding="utf-8")
    m = re.search(pattern, text, re.M | re.S)
    assert m and m[1] == version()
    f.write_text(text[:m.start(1)] + "0.0.1" + text[m.end(1):], encoding="utf-8")
    result = run("release_check.py", release_copy)
    assert result.returncode == 1
    assert f"{path}: version '0.0.1' is not Cargo.toml's {version()}" in result.stderr


def test_meta_json_without_the_newest_postgresql_fails_the_release_check(release_copy):
    meta = release_copy / "META.json"
    text = meta.read_text(encoding="utf-8")
    assert '"PostgreSQL": ">= 14.0.0, < 20.0.0"' in text
    meta.write_text(text.replace("< 20.0.0", "< 19.0.0"), encoding="utf-8")
    result = run("release_check.py", release_copy)
    assert result.returncode == 1
    assert "prereqs.runtime.requires.PostgreSQL is '>= 14.0.0, < 19.0.0', not '>= 14.0.0, < 20.0.0'" in result.stderr


def test_bump_moves_the_clients(release_copy):
    # Release the current version in the copy (its CHANGELOG section and frozen install script),
    # then begin the next.
    v = version()
    log = release_copy / "CHANGELOG.md"
    log.write_text(log.read_text(encoding="utf-8").replace(f"## Unreleased {v}", f"## {v}", 1), encoding="utf-8")
    shutil.copy(release_copy / "sql" / "released" / sorted(
        p.name for p in (release_copy / "sql" / "released").iterdir())[-1],
        release_copy / "sql" / "released" / f"pg_idgen--{v}.sql")
    assert run("release_check.py", release_copy).returncode == 0
    major, minor, _ = (int(x) for x in v.split("-")[0].split("."))
    new = f"{major}.{minor + 1}.0"
    result = run("release_check.py", "--bump", new, release_copy)
    assert result.returncode == 0, result.stderr
    for path, pattern in release_check.CLIENT_VERSIONS:
        assert re.search(pattern, (release_copy / path).read_text(encoding="utf-8"), re.M | re.S)[1] == new, path
