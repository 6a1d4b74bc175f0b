"""``kstore serve`` compacting its storage history every few seconds (the 410 scenario).

kube-apiserver's flag for the compaction period is ``--etcd-compaction-interval``. kstore's
serve configuration has the setting (``ServeConfig.compaction_interval_seconds``, honoured by
the LMDB and the etcd backend), but the command line does not offer the flag yet. So that the
scenario still runs the real command line — argument parsing, backend, registry, uvicorn,
signal handling — this entry point runs ``kstore.cli.main`` unchanged and only sets the interval
on the configuration the command line builds.

Usage: ``python -m tests.clients.compacting_serve SECONDS serve [kstore serve flags...]``
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

from kstore import cli
from kstore.server import serve as serve_module


def main(argv: list[str]) -> int:
    seconds = float(argv[0])
    real_serve = serve_module.serve

    def serve(config: serve_module.ServeConfig, **kwargs: Any) -> int:
        return real_serve(
            dataclasses.replace(config, compaction_interval_seconds=seconds), **kwargs
        )

    # kstore.cli imports the serve function when the verb runs, so it picks this one up.
    serve_module.serve = serve
    return cli.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
