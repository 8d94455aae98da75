"""``asrpt place``: place one DNN job of an instance file on free GPUs.

``asrpt place FILE --job ID [--free 8,8,4] [--method ilp] [--objective cut|tau]
[--solver highs|cbc] [--time-limit S] [--gap G] [--seed N] [--json]`` builds the job's worker
graph on its best GPU type in the instance's cluster, places it with
:func:`asrpt.placement.place` on the free GPUs (default: every GPU of the cluster; ``--free``
lists one number per server, in the cluster's order) and prints the GPUs per server, the bytes
that cross servers, the iteration time, the solver status and bound, and the time taken.
Errors (unknown job, abstract job, too few free GPUs, a ``--free`` list that does not match the
cluster) are one line, exit status 2.
"""

from __future__ import annotations


from ..errors import InvalidParameterError
from ._common import (add_instance, add_json, add_plot, emit_json, format_table, free_gpu_list,
                      load_from_args, positive_float, relative_gap, write_plot)


def register(sub) -> None:
    from ..placement import METHODS, OBJECTIVES
    from ..solve import SOLVERS

    p = sub.add_parser(
        "place",
        help="place one DNN job's workers on free GPUs (ILP or a heuristic)",
        description="Place the workers of one DNN job of an instance on the free GPUs of its "
                    "cluster, minimising the bytes that cross servers (or the iteration time), "
                    "and report the placement, its cost and the solver status.",
    )
    add_instance(p, exact=False)
    p.add_argument("--job", required=True, metavar="ID", help="the job to place (a DNN job)")
    p.add_argument("--free", type=free_gpu_list, default=None, metavar="F1,F2,...",
                   help="free GPUs per server, in the cluster's order (default: all GPUs)")
    p.add_argument("--method", default="ilp", choices=METHODS.choices(),
                   help="placement method (default: ilp)")
    p.add_argument("--objective", default="cut", choices=OBJECTIVES,
                   help="minimise the bytes crossing servers (cut) or the iteration time (tau)")
    p.add_argument("--solver", default="highs", choices=SOLVERS, help="MILP backend (default highs)")
    p.add_argument("--time-limit", type=positive_float, default=60.0, metavar="S",
                   help="seconds for the solver (default 60)")
    p.add_argument("--gap", type=relative_gap, default=0.0, metavar="G",
                   help="relative MIP gap at which to stop (default 0: prove optimality)")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="seed of randomised methods")
    add_json(p)
    add_plot(p, "the worker graph on its servers, cut edges highlighted")
    p.set_defaults(func=run)


def _placement_figure(graph, placement, free):
    from ..plots import placement_graph

    return placement_graph(graph, placement, free_gpus=free)


def run(args) -> int:
    from ..dnn.parallel import worker_graph
    from ..dnn.perf import best_gpu_type, best_iteration_time
    from ..placement import place

    instance = load_from_args(args)
    try:
        job = instance.job(args.job)
    except (KeyError, InvalidParameterError, LookupError):
        raise InvalidParameterError(f"no job {args.job!r} in {args.instance}") from None
    if job.is_abstract:
        raise InvalidParameterError(
            f"job {args.job!r} is abstract (no model): only DNN jobs have a worker graph")
    cluster = instance.cluster
    free = args.free if args.free is not None else list(cluster.server_gpus)
    if len(free) != cluster.n_servers:
        raise InvalidParameterError(
            f"--free lists {len(free)} servers, the cluster has {cluster.n_servers}")
    gpu = best_gpu_type(job, cluster)
    graph = worker_graph(job, gpu)
    if args.seed < 0:
        raise InvalidParameterError(f"--seed must be non-negative, got {args.seed}")
    p = place(graph, free, method=args.method, objective=args.objective, solver=args.solver,
              time_limit=args.time_limit, gap=args.gap, cluster=cluster, job=job, seed=args.seed)
    tau_star = best_iteration_time(job, cluster)
    write_plot(args.plot, lambda: _placement_figure(graph, p, free))
    if args.json:
        payload = {"job": job.id, "model": job.model,
                   "parallelism": dict(zip(("dp", "pp", "tp"), job.parallelism.as_tuple())),
                   "gpus": job.gpus, "gpu_type": gpu, "free": list(free),
                   "tau_star": tau_star, "total_bytes": sum(b for *_, b in graph.edges(data="bytes")),
                   **p.to_dict()}
        emit_json(payload)
        return 0
    par = job.parallelism
    print(f"job {job.id}: {job.model}, dp={par.dp} pp={par.pp} tp={par.tp} ({job.gpus} workers "
          f"on {gpu}); free GPUs {','.join(str(f) for f in free)}")
    print(f"method {p.method} ({p.objective}): status {p.status}"
          + (f", bound {p.bound:.6g}" if p.bound is not None else "")
          + (f", {p.detail['formulation']}" if "formulation" in p.detail else "")
          + f", {p.solve_time:.3g} s")
    print(f"bytes across servers per iteration: {p.cut_bytes:.6g}; servers used: {p.servers_used}")
    if p.tau is not None:
        print(f"iteration time: {p.tau:.6g} s (tau* {tau_star:.6g} s, stretch "
              f"{p.tau / tau_star:.4g})")
    rows = []
    by_server: dict = {}
    for w, h in p.assignment.items():
        by_server.setdefault(h, []).append(w)
    for h, g in p.server_gpus:
        workers = sorted(by_server[h])
        shown = " ".join("".join(map(str, w)) if isinstance(w, tuple) else str(w)
                         for w in workers[:8])
        rows.append([h, free[h], g, shown + (" ..." if len(workers) > 8 else "")])
    print(format_table(["server", "free", "used", "workers (r s k)"], rows))
    return 0
