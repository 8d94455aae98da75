"""``asrpt validate FILE``: check an instance file and list every problem with its location."""

from __future__ import annotations

import sys

from ..errors import InvalidInstance
from ..instance import read_json, read_text
from ..loading import instance_problems
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
    text = read_text(path)  # an unreadable file is an error (exit 2), not a list of problems
    try:
        problems, inst = instance_problems(read_json(text, source=path, exact=args.exact), exact=args.exact)
    except InvalidInstance as exc:  # malformed JSON: one problem, reported like the others
        problems, inst = list(exc.problems), None
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
