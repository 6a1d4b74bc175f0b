"""Watch cache benchmark: fan-out latency and CPU per delivery, LIST from the cache vs LMDB.

Run: ``python -m bench.bench_watch`` (the same report as ``kstore bench watch``). Options:
``--duration`` seconds per fan-out scenario, ``--non-durable`` for commits without fsync,
``--default-gc`` to measure under CPython's default collector instead of the
:class:`~kstore.cache.gc_policy.LongLivedObjects` policy a server holding caches should use,
``--list-objects`` for the LIST comparison's size. Prints medians and ratios; gates nothing.
"""

from __future__ import annotations

import argparse

from kstore.benchmarks.watch import run_watch_bench


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--non-durable", action="store_true")
    parser.add_argument("--default-gc", action="store_true")
    parser.add_argument("--list-objects", type=int, default=10_000)
    args = parser.parse_args()
    print(
        run_watch_bench(
            duration=args.duration,
            durable=not args.non_durable,
            gc_policy=not args.default_gc,
            list_objects=args.list_objects,
        )
    )


if __name__ == "__main__":
    main()
