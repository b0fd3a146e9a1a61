"""The suite as another project's dependency: its wheel, installed into a fresh virtual environment
beside a user project that has its own ``vectors`` package, its own tests and its own
implementation module (``mypkg.sm5:create``).

The wheel is built from a copy of the sources (``pip wheel --no-deps --no-build-isolation``) and
installed with ``--no-deps --no-index``; the environment reaches the dependencies already installed
for this interpreter (PyYAML, jsonschema, z3, pytest, ...) through a ``.pth`` file, so nothing is
downloaded, and gets pytest's console script as pip would write it. The project's own editable
install is not visible there: ``sm5`` comes from the wheel.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "sm5", "spec", "oracle", "vectors", "conformance",
           "reports")
SELECT = "store_structured/boundary/000*"  # ten golden vectors: 0000 to 0009
HEAVY = ("sm5.oracle", "sm5.vectors", "sm5.conformance.run", "yaml", "jsonschema", "z3")

USER_TEST = textwrap.dedent('''\
    import sys
    from pathlib import Path

    import vectors  # the project's own package, not the suite's

    HEAVY = {heavy!r}


    def test_own_vectors_package():
        assert vectors.OWNER == "user"
        assert Path(vectors.__file__).parent == Path(__file__).parent / "vectors"


    def test_the_plugin_loaded_and_imported_nothing_heavy():
        assert "sm5.conformance.plugin" in sys.modules
        loaded = [m for m in HEAVY if m in sys.modules]
        assert loaded == []
''').format(heavy=HEAVY)

USER_IMPL = textwrap.dedent('''\
    from sm5.conformance.oracle_impl import OracleImplementation


    class Mine(OracleImplementation):
        name = "mypkg"


    def create():
        return Mine()
''')


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtual environment holding the wheel; yields its folder."""
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    src.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy(path, src / name)
    dist = base / "dist"
    build = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                  "-q", str(src), "-w", str(dist)], base)
    if build.returncode != 0 and "bdist_wheel" in build.stderr:
        pytest.skip("the 'wheel' package is missing (pip install -e '.[test]' installs it)")
    assert build.returncode == 0, build.stderr
    wheels = sorted(dist.glob("sm5_conformance-*.whl"))
    assert len(wheels) == 1
    env = base / "env"
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(env)], base)
    assert made.returncode == 0, made.stderr
    python = env / "bin" / "python"
    install = _run([sys.executable, "-m", "pip", "--python", str(python), "install",
                    "--no-deps", "--no-index", "-q", str(wheels[0])], base)
    assert install.returncode == 0, install.stderr
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                   base).stdout.strip()
    Path(purelib, "sm5-test-dependencies.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    # pytest's console script, as pip writes it when pytest is installed into the environment.
    script = env / "bin" / "pytest"
    script.write_text(f"#!{python}\nimport sys\nfrom pytest import console_main\n"
                      "sys.exit(console_main())\n", encoding="utf-8")
    script.chmod(0o755)
    yield env


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user project: its own ``vectors`` package, a test file and ``mypkg/sm5.py``."""
    root = tmp_path_factory.mktemp("user-project")
    (root / "vectors").mkdir()
    (root / "vectors" / "__init__.py").write_text('OWNER = "user"\n', encoding="utf-8")
    (root / "mypkg").mkdir()
    (root / "mypkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "mypkg" / "sm5.py").write_text(USER_IMPL, encoding="utf-8")
    (root / "test_user.py").write_text(USER_TEST, encoding="utf-8")
    return root


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300,
                          check=False, env=env)


PYTESTS = {"pytest": ["bin/pytest"], "python -m pytest": ["bin/python", "-m", "pytest"]}


def _pytest(env: Path, how: str, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    first, *rest = PYTESTS[how]
    return _run([str(env / first), *rest, "-p", "no:cacheprovider", *args], project)


def test_the_wheel_installs_one_package(installed: Path) -> None:
    purelib = next(installed.glob("lib/python*/site-packages"))
    records = next(purelib.glob("sm5_conformance-*.dist-info")) / "RECORD"
    tops = {line.split("/")[0] for line in records.read_text(encoding="utf-8").splitlines()
            if "/" in line and not line.startswith(("sm5_conformance-", "../"))}
    assert tops == {"sm5"}
    where = _run([str(installed / "bin" / "python"), "-c", "import sm5; print(sm5.__file__)"],
                 installed)
    assert Path(where.stdout.strip()).is_relative_to(purelib), where.stdout + where.stderr


@pytest.mark.parametrize("how", sorted(PYTESTS))
def test_user_tests_run_beside_the_plugin(installed: Path, project: Path, how: str) -> None:
    proc = _pytest(installed, how, project, "-q")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout


@pytest.mark.parametrize("how", sorted(PYTESTS))
def test_documented_module_factory_works_as_written(installed: Path, project: Path,
                                                    how: str) -> None:
    junit = project / f"junit-{how.replace(' ', '-')}.xml"
    proc = _pytest(installed, how, project, "-q", "--sm5-impl=mypkg.sm5:create",
                   f"--sm5-select={SELECT}", f"--junitxml={junit}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "10 passed" in proc.stdout
    assert "sm5: mypkg: 10 pass" in proc.stdout
    cases = ET.parse(junit).getroot().findall(".//testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("store_structured.boundary", f"store_structured/boundary/000{i}") for i in range(10)]


def test_sm5_conform_finds_the_module_in_the_working_directory(installed: Path,
                                                               project: Path) -> None:
    proc = _run([str(installed / "bin" / "sm5"), "conform", "--impl", "mypkg.sm5:create",
                 "--select", SELECT, "--quiet"], project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("mypkg: 10 vectors: 10 pass")
