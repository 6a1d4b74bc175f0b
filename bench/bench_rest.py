"""REST benchmark: creates, gets, lists and watch events per second through HTTP on LMDB,
beside a trivial endpoint of the same server in the same run.

Run: ``python -m bench.bench_rest`` (the same report as ``kstore bench rest``). Options:
``--clients`` concurrent keep-alive connections, ``--requests`` per figure and round,
``--watchers`` watch streams during the watched creates, ``--repeats`` rounds (medians),
``--kind`` the object created (``pod``, a realistic ~5 KiB Pod, or ``configmap``),
``--no-admission-plugins`` serves with every admission plugin off (the figure to compare the
default plugins' cost with: goal, pod creates within 15%). Goals
(issue 7): create >= 0.4x and get >= 0.5x the trivial endpoint's rate, create p99 <= 25 ms at
16 concurrent clients. Prints figures and ratios; gates nothing.
"""

from __future__ import annotations

import argparse

from kstore.benchmarks.rest import run_rest_bench


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--watchers", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--kind", choices=["pod", "configmap"], default="pod")
    parser.add_argument("--no-admission-plugins", action="store_true")
    args = parser.parse_args()
    result = run_rest_bench(
        clients=args.clients,
        requests=args.requests,
        watchers=args.watchers,
        repeats=args.repeats,
        kind=args.kind,
        admission_plugins=not args.no_admission_plugins,
    )
    print(result.report())


if __name__ == "__main__":
    main()
