"""The ``kstore`` command: ``convert`` (like ``kubectl convert``) and the admin verbs.

Every verb prints a one-line reason and exits with status 1 on input it cannot handle; nothing
prints a traceback for a user error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import BinaryIO

import orjson

from kstore.api.gvk import GroupVersion, gvk_of
from kstore.api.kinds import builtin_scheme
from kstore.codec.recognizer import (
    MEDIA_TYPE_PROTOBUF,
    PROTOBUF_MAGIC,
    serializer_for_content,
    serializer_for_media_type,
)
from kstore.codec.yaml import MEDIA_TYPE_YAML
from kstore.errors import BadRequest, KStoreError

__all__ = ["main"]

_OUTPUT_MEDIA_TYPES = {
    "json": "application/json",
    "yaml": MEDIA_TYPE_YAML,
    "protobuf": MEDIA_TYPE_PROTOBUF,
}


def _read_input(path: str, stdin: BinaryIO) -> bytes:
    if path == "-":
        return stdin.read()
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise BadRequest(f"cannot read {path}: {exc.strerror}") from None


def _input_format(data: bytes) -> str:
    if data.startswith(PROTOBUF_MAGIC):
        return "protobuf"
    return "json" if data.lstrip()[:1] == b"{" else "yaml"


def convert(args: argparse.Namespace, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Read one object, convert it through the hub, write it in the requested version/format."""
    scheme = builtin_scheme()
    data = _read_input(args.filename, stdin)
    if not data.strip():
        raise BadRequest("no object in the input")
    obj = serializer_for_content(data).decode(data)
    gvk = gvk_of(obj)
    if not scheme.recognizes(gvk):
        raise BadRequest(f'no kind "{gvk.kind}" is registered for version "{gvk.api_version}"')
    target = args.output_version or gvk.api_version
    if GroupVersion.parse(target).group != gvk.group:
        raise BadRequest(f"{gvk.kind} of group {gvk.group!r} cannot be converted to {target}")
    if args.validate:
        scheme.default(obj)
        scheme.validate(scheme.to_hub(obj))
    out = scheme.convert(obj, target)
    output = args.output or ("json" if _input_format(data) == "protobuf" else _input_format(data))
    if output == "json":
        stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        stdout.write(serializer_for_media_type(_OUTPUT_MEDIA_TYPES[output]).encode(out))


def bench(args: argparse.Namespace, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Run one benchmark and print its table (medians and ratios against the raw backend)."""
    if args.subject == "storage":
        from kstore.benchmarks.storage import run_storage_bench

        try:
            report = run_storage_bench(
                args.backend, objects=args.objects, writers=args.writers, repeats=args.repeats
            )
        except ValueError as exc:
            raise BadRequest(str(exc)) from None
    stdout.write(report.encode() + b"\n")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kstore", description="A versioned object store engine for control planes."
    )
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    conv = verbs.add_parser(
        "convert",
        help="convert an object between API versions (like kubectl convert)",
        description=(
            "Read one object (JSON, YAML or Kubernetes protobuf, detected from the content), "
            "convert it through its kind's hub version and print it in the requested version. "
            "Neither defaults nor validates unless --validate is given."
        ),
    )
    conv.add_argument("-f", "--filename", required=True, help="the input file, or - for stdin")
    conv.add_argument(
        "--output-version",
        metavar="GROUP/VERSION",
        help="the version to print (default: the input's own)",
    )
    conv.add_argument(
        "-o",
        "--output",
        choices=sorted(_OUTPUT_MEDIA_TYPES),
        help="output format (default: the input's; json for protobuf input)",
    )
    conv.add_argument(
        "--validate", action="store_true", help="apply defaults and validate the object"
    )
    conv.set_defaults(run=convert)

    bench_parser = verbs.add_parser(
        "bench",
        help="run a benchmark beside the raw backend and print a table",
        description="Measure kstore beside the raw engine under it, in the same run.",
    )
    bench_parser.add_argument("subject", choices=["storage"], help="what to measure")
    bench_parser.add_argument("--backend", default="lmdb", help="storage backend (lmdb)")
    bench_parser.add_argument("--objects", type=int, default=10_000, help="objects to list")
    bench_parser.add_argument("--writers", type=int, default=16, help="concurrent creators")
    bench_parser.add_argument("--repeats", type=int, default=3, help="runs per figure (median)")
    bench_parser.set_defaults(run=bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        args.run(args, sys.stdin.buffer, sys.stdout.buffer)
    except KStoreError as exc:
        print(f"error: {' '.join(exc.message.split())}", file=sys.stderr)
        return 1
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
