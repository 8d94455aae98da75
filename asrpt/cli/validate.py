"""``asrpt validate FILE``: check an instance file and list every problem with its location."""

from __future__ import annotations

import json
import sys
from fractions import Fraction

from ..errors import InvalidInstance, Problem
from ..instance import instance_problems, parse_number
from ._common import add_instance, add_json, emit_json


def register(sub) -> None:
    p = sub.add_parser(
        "validate",
        help="check an instance file; exit 1 if it has problems",
        description="Check an instance file against the instance format and print every problem "
                    "with its location (e.g. jobs[3].gpus: 9 exceeds the cluster's 8 GPUs). "
                    "Exit status 0 when valid, 1 when it has problems, 2 when the file cannot be read.",
    )
    add_instance(p)
    add_json(p)
    p.set_defaults(func=run)


def run(args) -> int:
    path = args.instance
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise InvalidInstance([Problem("", "no such file")], source=path) from None
    except IsADirectoryError:
        raise InvalidInstance([Problem("", "is a directory, not an instance file")], source=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInstance([Problem("", f"cannot read: {exc}")], source=path) from None
    try:
        parse_float = (lambda s: parse_number(Fraction(s), exact=True)) if args.exact else float
        data = json.loads(text, parse_float=parse_float)
    except (json.JSONDecodeError, RecursionError) as exc:
        where = f" at line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        problems, inst = [Problem("", f"invalid JSON{where}")], None
    else:
        problems, inst = instance_problems(data, exact=args.exact)
    if args.json:
        payload = {"file": path, "valid": not problems,
                   "problems": [{"location": p.location, "message": p.message} for p in problems]}
        if inst is not None:
            payload.update(jobs=inst.n_jobs, servers=inst.cluster.n_servers, gpus=inst.cluster.total_gpus)
        emit_json(payload)
    elif problems:
        for p in problems:
            print(f"{path}: {p}")
    else:
        assert inst is not None
        n, h, m = inst.n_jobs, inst.cluster.n_servers, inst.cluster.total_gpus
        print(f"{path}: valid ({n} job{'s' * (n != 1)}, {h} server{'s' * (h != 1)}, "
              f"{m} GPU{'s' * (m != 1)})")
    if problems:
        print(f"{path}: {len(problems)} problem{'s' if len(problems) != 1 else ''}", file=sys.stderr)
        return 1
    return 0
