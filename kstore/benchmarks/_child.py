"""Ending a process a benchmark started: the one way every bench stops its servers."""

from __future__ import annotations

import subprocess
from typing import Any

__all__ = ["stop_child"]


def stop_child(process: subprocess.Popen[Any], timeout: float = 30.0) -> None:
    """SIGTERM, then SIGKILL after ``timeout`` seconds; the pipe to its output is closed."""
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    finally:
        if process.stdout is not None:
            process.stdout.close()
