"""Puts the SDK's source ahead of any installed copy, so that the tests test this tree; and a few helpers."""

import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SDK = TESTS.parent
if str(SDK) not in sys.path:
    sys.path.insert(0, str(SDK))


class MovingClock:
    """A clock the test moves."""

    def __init__(self, start: str = "2026-11-29T10:00:00+00:00"):
        self.now = datetime.fromisoformat(start)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def run_python(code: str, *args: str, env=None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Runs ``code`` in a fresh interpreter that imports the SDK from this tree."""
    environment = dict(os.environ if env is None else env)
    if "PYTHONDONTWRITEBYTECODE" in os.environ:  # PythonSdkTest's: no __pycache__ in the source tree
        environment["PYTHONDONTWRITEBYTECODE"] = os.environ["PYTHONDONTWRITEBYTECODE"]
    environment["PYTHONPATH"] = os.pathsep.join([str(SDK), str(TESTS), environment.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", code, *args], env=environment, capture_output=True, text=True,
                          timeout=timeout)


UTC = timezone.utc
