"""``asrpt model``: a zoo model under a parallel configuration, or the zoo itself.

``asrpt model MODEL [--batch B] [--seq-len S] [--gpu H200] [--parallel dp,pp,tp] [--precision P]
[--layers] [--json]`` prints the parameters, FLOPs per iteration, memory per GPU of each pipeline
stage and the predicted iteration time tau* (consolidated on servers of the GPU's reference size,
see :mod:`asrpt.dnn.perf`) with its terms; ``--seq-len`` sets a transformer's tokens per sequence
and ``--layers`` adds the per-layer forward and backward times of one micro-batch on one GPU,
each with what bounds it (compute, memory or launch); ``asrpt model --list [--json]`` lists the
zoo with parameter counts. Errors (unknown model or GPU, a configuration that does not fit) are one line, exit 2.
"""

from __future__ import annotations

import argparse
import math

from ..errors import InvalidParameterError
from ._common import add_json, emit_json, format_table, positive_float, positive_int


def _parallel(text: str):
    from ..instance import Parallelism

    parts = text.replace("x", ",").split(",")
    try:
        values = [int(p) for p in parts]
        if len(values) != 3 or min(values) < 1:
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not dp,pp,tp (three positive integers such as 2,4,8)") from None
    from ..errors import AsrptError

    try:
        return Parallelism(*values)
    except AsrptError as exc:  # argparse would hide the reason behind "invalid _parallel value"
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None


def register(sub) -> None:
    p = sub.add_parser(
        "model",
        help="a zoo model under a parallel configuration: parameters, FLOPs, memory, tau*",
        description="Show a zoo model under a parallel configuration (parameters, FLOPs per "
                    "iteration, memory per GPU of each pipeline stage, predicted iteration time "
                    "and its terms), or list the zoo with --list.",
    )
    p.add_argument("model", nargs="?", metavar="MODEL", help="zoo model name (see --list)")
    p.add_argument("--list", action="store_true", help="list the zoo models with parameter counts")
    p.add_argument("--batch", type=positive_int, default=None, metavar="B",
                   help="global batch (samples per iteration); default: the model's")
    p.add_argument("--seq-len", type=positive_int, default=None, metavar="S",
                   help="tokens per sequence of a transformer (default: the model's)")
    p.add_argument("--layers", action="store_true",
                   help="show per-layer times of one micro-batch on one GPU and their bound")
    p.add_argument("--gpu", default="H200", metavar="GPU",
                   help="GPU type (default H200; e.g. V100, A100, H100, T4)")
    p.add_argument("--parallel", type=_parallel, default=None, metavar="DP,PP,TP",
                   help="data, pipeline and tensor parallel degrees (default 1,1,1)")
    p.add_argument("--precision", default=None,
                   help="fp32, tf32, fp16, bf16, fp8, amp (fp16 autocast) or amp-bf16 "
                        "(bf16 autocast) (default: the GPU's)")
    p.add_argument("--gpus-per-server", type=positive_int, default=None, metavar="G",
                   help="GPUs per server (default: the GPU's reference server)")
    p.add_argument("--inter-bandwidth", type=positive_float, default=None, metavar="BYTES_PER_S",
                   help="network bandwidth per server (default: the GPU's reference server)")
    add_json(p)
    p.set_defaults(func=run)


def _list(args) -> int:
    from ..dnn import get_model, model_names

    specs = [get_model(n) for n in model_names()]
    if args.json:
        emit_json({"models": [{"name": s.name, "family": s.family, "params": s.params,
                               "default_batch_size": s.default_batch_size,
                               "input": dict(s.input), "reference": s.reference}
                              for s in specs]})
    else:
        print(format_table(["model", "family", "params", "batch", "reference"],
                           [[s.name, s.family, f"{s.params:,}", s.default_batch_size, s.reference]
                            for s in specs]))
    return 0


def run(args) -> int:
    if args.list:
        if args.model is not None:
            raise InvalidParameterError("give either MODEL or --list, not both")
        return _list(args)
    if args.model is None:
        raise InvalidParameterError("a MODEL is required (or --list to see the zoo)")
    from ..dnn import get_model
    from ..dnn.hardware import gpu_spec, precision_info
    from ..dnn.parallel import job_plan
    from ..dnn.perf import consolidated_assignment, iteration_breakdown
    from ..instance import Cluster, Job, Parallelism

    spec = get_model(args.model)
    gpu = gpu_spec(args.gpu)
    precision = precision_info(args.precision).name if args.precision else None
    par = args.parallel or Parallelism(1, 1, 1)
    per_server = args.gpus_per_server or gpu.gpus_per_server
    servers = max(1, math.ceil(par.gpus / per_server))
    cluster = Cluster.homogeneous(servers, per_server, gpu.name,
                                  inter_bandwidth=args.inter_bandwidth)
    if args.seq_len is not None:
        if "seq_len" not in spec.overrides:
            raise InvalidParameterError(
                f"--seq-len: {spec.name} takes no sequence length (it is not a transformer)")
        limit = spec.config.get("max_positions")
        if limit is not None and args.seq_len > limit:
            raise InvalidParameterError(
                f"--seq-len: {args.seq_len} exceeds the {limit} positions of {spec.name}")
    job = Job(spec.name, 0, par.gpus, model=spec.name, parallelism=par, batch_size=args.batch,
              precision=precision, iterations=1, seq_len=args.seq_len)
    plan = job_plan(job, gpu.name)
    assignment = consolidated_assignment(job, cluster)
    b = iteration_breakdown(job, assignment, cluster)
    c = plan.config
    stages = []
    for s in range(c.pp):
        lo, hi = plan.partition.bounds[s], plan.partition.bounds[s + 1]
        stages.append({"stage": s, "layers": [lo, hi - 1], "params_per_gpu": plan.stage_params[s],
                       "memory_per_gpu": plan.memory[s],
                       "state_memory": plan.partition.state_memory[s],
                       "activation_memory": plan.partition.activation_memory[s],
                       "fwd_time": plan.fwd_time[s], "bwd_time": plan.bwd_time[s],
                       "tp_time": b.tp_time[s], "pp_time": b.pp_time[s], "dp_time": b.dp_time[s]})
    payload = {
        "model": spec.name, "family": spec.family, "params": plan.params_total,
        "gpu": gpu.name, "precision": plan.precision,
        "parallelism": {"dp": c.dp, "pp": c.pp, "tp": c.tp}, "gpus": c.gpus,
        "batch_size": c.batch_size, "micro_batches": c.micro_batches,
        "flops_per_iteration": plan.flops_per_iteration,
        "memory_per_gpu": max(plan.memory), "memory_capacity": plan.partition.capacity,
        "servers": b.servers, "gpus_per_server": per_server,
        "iteration_time": b.tau,
        "samples_per_second": c.batch_size / b.tau,
        "breakdown": {"compute": b.compute, "pipeline": b.pipeline,
                      "dp_exposed": b.dp_exposed, "optimizer": b.optimizer,
                      "overhead": b.overhead},
        "stages": stages,
    }
    if args.seq_len is not None or "seq_len" in spec.overrides:
        payload["seq_len"] = args.seq_len or spec.input.get("seq_len")
    if args.layers:
        payload["layers"] = _layer_rows(plan, gpu)
    if args.json:
        emit_json(payload)
        return 0
    gb = lambda x: f"{x / 1e9:.2f} GB"  # noqa: E731
    print(f"{spec.name} ({spec.family}): {plan.params_total:,} parameters")
    print(f"{gpu.name}, {plan.precision}, dp={c.dp} pp={c.pp} tp={c.tp} ({c.gpus} GPUs on "
          f"{b.servers} server{'s' if b.servers != 1 else ''} of {per_server}), batch "
          f"{c.batch_size} in {c.micro_batches} micro-batch{'es' if c.micro_batches != 1 else ''}")
    print(f"FLOPs per iteration: {plan.flops_per_iteration:.4g}")
    print(f"memory per GPU: {gb(max(plan.memory))} of {gb(plan.partition.capacity)} usable")
    print(f"iteration time: {b.tau:.6g} s ({c.batch_size / b.tau:.6g} samples/s); compute "
          f"{b.compute:.4g} s, pipeline {b.pipeline:.4g} s, exposed all-reduce "
          f"{b.dp_exposed:.4g} s, optimizer {b.optimizer:.4g} s, overhead {b.overhead:.4g} s")
    print(format_table(
        ["stage", "layers", "params/GPU", "memory/GPU", "fwd s", "bwd s", "tp s", "pp s", "dp s"],
        [[st["stage"], f"{st['layers'][0]}-{st['layers'][1]}", f"{st['params_per_gpu']:.4g}",
          gb(st["memory_per_gpu"]), st["fwd_time"], st["bwd_time"], st["tp_time"], st["pp_time"],
          st["dp_time"]] for st in stages]))
    if args.layers:
        print(format_table(
            ["layer", "type", "class", "fwd s", "bwd s", "bound"],
            [[r["layer"], r["type"], r["class"], f"{r['fwd_time']:.3g}", f"{r['bwd_time']:.3g}",
              r["bound"]] for r in payload["layers"]]))
    return 0


def _layer_rows(plan, gpu) -> list[dict]:
    """Per-layer times of one micro-batch on one GPU of the plan and what bounds each."""
    from ..dnn.hardware import precision_info
    from ..dnn.parallel import _host_costs, _layer_costs
    from ..dnn.roofline import SCORE_PASSES

    table, params = plan._table, plan._params
    prec = precision_info(plan.precision)
    c = plan.config
    t_f, t_b = _layer_costs(table, c.micro_batch_size, c.tp, gpu, prec, params)
    h_f, h_b = _host_costs(table, gpu, params)
    kp = params.kernel_model(gpu.name)
    rows = []
    for i, name in enumerate(table.nodes):
        bound = "-"
        if kp is not None:
            n = c.micro_batch_size / c.tp
            comp = table.fwd[i] * n / ((kp.conv_efficiency if table.types[i] == "conv"
                                        else kp.matmul_efficiency) * gpu.peak_flops(prec.name))
            mem = (((table.inp[i] + table.out[i] + table.act[i] + SCORE_PASSES * table.score[i])
                    * n + table.params[i] / c.tp) * prec.activation_bytes
                   / (gpu.memory_bandwidth * kp.bandwidth(table.klass[i])))
            bound = "launch" if h_f[i] >= t_f[i] else ("compute" if comp >= mem else "memory")
        rows.append({"layer": name, "type": table.types[i],
                     "class": table.klass[i] if table.klass else "-",
                     "fwd_time": float(t_f[i]), "bwd_time": float(t_b[i]),
                     "host_fwd": float(h_f[i]), "host_bwd": float(h_b[i]), "bound": bound})
    return rows
