"""Where the D3D11 runner runs: directly on Windows, under Wine elsewhere.

Under Wine the runner needs a prefix (created once with ``wineboot`` into a cache folder, about
20 s, then reused; never inside the repository) and an X display: device creation fails
without one, so each host starts its own ``Xvfb`` on a free display (``-displayfd``) with no
TCP listener, and stops it when closed. ``WINEDLLOVERRIDES`` keeps Wine from offering its Mono
and Gecko installers; ``WINE_D3D_CONFIG`` chooses wined3d's renderer (``gl`` on Mesa llvmpipe,
``vulkan`` on lavapipe) per process.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from sm5.conformance.process_env import subprocess_environ
from sm5.oracle.errors import Sm5Error

RUNNER_NAME = "sm5-d3d11-runner.exe"
RENDERERS = ("gl", "vulkan", "dxvk")
#: DXVK's DLLs, and the file naming the version the setup installed (see `dxvk_dir`).
DXVK_DLLS = ("d3d11.dll", "dxgi.dll")
DXVK_VERSION_FILE = "VERSION"
READY_MARK = ".sm5-ready"
WINEBOOT_TIMEOUT_S = 300.0
XVFB_TIMEOUT_S = 30.0
#: Seconds the wineserver outlives its last process (later runner starts skip its start-up).
WINESERVER_LINGER_S = 10
_BASE_ENV = {"WINEDEBUG": "-all", "WINEDLLOVERRIDES": "mscoree,mshtml="}
_DXVK_ENV = {"WINEDLLOVERRIDES": "mscoree,mshtml=;d3d11,dxgi=n", "DXVK_LOG_LEVEL": "none",
             "DXVK_LOG_PATH": "none", "DXVK_STATE_CACHE": "0"}
_CRASH_DIALOG_OFF = ["reg", "add", r"HKCU\Software\Wine\WineDbg", "/v", "ShowCrashDialog",
                     "/t", "REG_DWORD", "/d", "0", "/f"]


class HostUnavailable(Sm5Error):
    """A piece the runner needs (the .exe, wine, Xvfb, the prefix) is missing or broken."""


def cache_dir() -> Path:
    """``$SM5_D3D11_DIR``, else ``~/.cache/sm5-conformance/d3d11``."""
    explicit = os.environ.get("SM5_D3D11_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sm5-conformance" / "d3d11"


def dxvk_dir() -> Path:
    """``$SM5_DXVK_DIR``, else ``~/.cache/sm5-conformance/dxvk``: DXVK's DLLs and version."""
    explicit = os.environ.get("SM5_DXVK_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sm5-conformance" / "dxvk"


def dxvk_version(folder: Path | None = None) -> str:
    """The DXVK version the setup recorded (``2.6+ds-1 (Debian trixie dxvk-wine64)``), or ""."""
    path = (folder or dxvk_dir()) / DXVK_VERSION_FILE
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def runner_path() -> Path:
    """``$SM5_D3D11_RUNNER``, else the build of ``runners/d3d11/build.sh`` in the cache."""
    explicit = os.environ.get("SM5_D3D11_RUNNER")
    return Path(explicit) if explicit else cache_dir() / RUNNER_NAME


def wine_program() -> str:
    wine = shutil.which("wine") or shutil.which("wine64")
    if wine is None:
        raise HostUnavailable("wine is not installed (Debian: apt-get install wine wine64; "
                              "or bash scripts/setup.sh --d3d11)")
    return wine


def is_windows() -> bool:
    return os.name == "nt"


@dataclass(frozen=True)
class Launch:
    """How to start the runner: the command line and the environment to add."""

    argv: tuple[str, ...]
    env: Mapping[str, str]


class Host:
    """Starts runners; under Wine it owns an Xvfb. Close it when done."""

    def __init__(self, renderer: str = "gl", *, runner: Path | None = None) -> None:
        if renderer not in RENDERERS:
            raise HostUnavailable(f"unknown renderer {renderer!r}; expected one of "
                                  f"{', '.join(RENDERERS)}")
        self.renderer = renderer
        self.runner = runner or runner_path()
        if not self.runner.is_file():
            raise HostUnavailable(f"no runner at {self.runner}; build it with "
                                  "bash scripts/setup.sh --d3d11 (or runners/d3d11/build.sh)")
        #: The DXVK version the setup recorded ("" for Wine's own d3d11).
        self.version = ""
        if renderer == "dxvk":
            self.version = dxvk_version()
            self.runner = _runner_beside_dxvk(self.runner, dxvk_dir())
        self._xvfb: subprocess.Popen[bytes] | None = None
        self.display = ""
        self.prefix: Path | None = None
        if is_windows():
            return
        self.wine = wine_program()
        if shutil.which("Xvfb") is None:
            raise HostUnavailable("Xvfb is not installed (Debian: apt-get install xvfb)")
        self.prefix = ensure_prefix(self.wine)
        self._start_xvfb()

    def launch(self, *args: str) -> Launch:
        if is_windows():
            return Launch((str(self.runner), *args), {})
        assert self.wine is not None and self.prefix is not None
        env = {**_BASE_ENV, "WINEPREFIX": str(self.prefix), "DISPLAY": self.display}
        if self.renderer == "dxvk":
            env.update(_DXVK_ENV)
        else:
            env["WINE_D3D_CONFIG"] = f"renderer={self.renderer}"
        return Launch((self.wine, str(self.runner), *args), env)

    def linger_wineserver(self) -> None:
        """Keep the prefix's wineserver for a few seconds after its last process (it then
        exits by itself), so that a restarted runner starts in about a second."""
        if is_windows() or self.prefix is None:
            return
        server = shutil.which("wineserver") or "/usr/lib/wine/wineserver"
        env = {**subprocess_environ(), **_BASE_ENV, "WINEPREFIX": str(self.prefix)}
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run([server, f"-p{WINESERVER_LINGER_S}"], env=env, timeout=30,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)

    def _start_xvfb(self) -> None:
        read, write = os.pipe()
        try:
            self._xvfb = subprocess.Popen(
                ["Xvfb", "-displayfd", str(write), "-nolisten", "tcp", "-screen", "0",
                 "640x480x24"], pass_fds=(write,), stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True)
        finally:
            os.close(write)
        with os.fdopen(read, "rb") as pipe:
            number = _read_line_with_timeout(pipe.fileno(), XVFB_TIMEOUT_S)
        if not number.strip().isdigit():
            self.close()
            raise HostUnavailable("Xvfb did not report a display number")
        self.display = f":{number.strip()}"

    def close(self) -> None:
        if self._xvfb is not None:
            self._xvfb.terminate()
            try:
                self._xvfb.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._xvfb.kill()
                self._xvfb.wait()
            self._xvfb = None

    def describe(self) -> str:
        if is_windows():
            return "Windows D3D11" + (f" with DXVK {self.version}" if self.version else "")
        if self.renderer == "dxvk":
            return f"Wine with DXVK {self.version or '(version unknown)'} on Xvfb {self.display}"
        return f"Wine ({self.renderer} renderer) on Xvfb {self.display}"


def _runner_beside_dxvk(runner: Path, folder: Path) -> Path:
    """A copy of ``runner`` in DXVK's folder (Wine loads the DLLs of the program's folder
    first), replaced atomically when the build changed."""
    missing = [name for name in DXVK_DLLS if not (folder / name).is_file()]
    if missing:
        raise HostUnavailable(f"DXVK is not installed: no {', '.join(missing)} in {folder} "
                              "(bash scripts/setup.sh --dxvk)")
    copy = folder / runner.name
    data = runner.read_bytes()
    try:
        same = copy.read_bytes() == data
    except OSError:
        same = False
    if not same:
        handle, temporary = tempfile.mkstemp(prefix=".runner.", suffix=".exe", dir=folder)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.chmod(temporary, 0o755)
            os.replace(temporary, copy)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise HostUnavailable(f"cannot copy the runner beside DXVK: {exc}",
                                  where=str(folder)) from None
    return copy


def _read_line_with_timeout(fd: int, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    data = b""
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 64)
        if not chunk:
            break
        data += chunk
    return data.decode("ascii", "replace")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    import fcntl  # POSIX only: a prefix exists only under Wine

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_prefix(wine: str) -> Path:
    """The cached Wine prefix, created once (under a lock, so parallel runs wait for it)."""
    prefix = cache_dir() / "prefix"
    if (prefix / READY_MARK).is_file():
        return prefix
    with _locked(cache_dir() / "prefix.lock"):
        if (prefix / READY_MARK).is_file():
            return prefix
        if prefix.exists():
            shutil.rmtree(prefix)  # a half-made prefix from an interrupted creation
        building = Path(tempfile.mkdtemp(prefix="prefix.", dir=cache_dir()))
        env = {**subprocess_environ(), **_BASE_ENV, "WINEPREFIX": str(building)}
        env.pop("DISPLAY", None)
        try:
            for argv in ([wine, "wineboot", "-u"], [wine, *_CRASH_DIALOG_OFF]):
                subprocess.run(argv, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=WINEBOOT_TIMEOUT_S,
                               check=True)
            server = shutil.which("wineserver") or "/usr/lib/wine/wineserver"
            subprocess.run([server, "-w"], env=env, timeout=WINEBOOT_TIMEOUT_S, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            shutil.rmtree(building, ignore_errors=True)
            raise HostUnavailable(f"cannot create the Wine prefix: {exc}",
                                  where=str(prefix)) from None
        (building / READY_MARK).write_text("ready\n")
        os.replace(building, prefix)
    return prefix
