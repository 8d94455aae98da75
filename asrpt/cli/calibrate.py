"""``asrpt calibrate``: fit the kernel model of a GPU type to measured training steps.

``asrpt calibrate MEASUREMENTS.json [MORE.json ...] --gpu H200 [--output FILE] [--layers]
[--fused-attention] [--apply-to H100] [--json]`` reads measurement files (the shared sweep
format: runs with ``iter_s_median``, ``fwd_s_median``, ``bwd_s_median``; optional per-layer
tables), fits the
constants of :class:`asrpt.dnn.roofline.KernelParams` (:func:`asrpt.dnn.kernel_fit.
fit_kernel_params`) and writes a parameter file in the format of the shipped
``asrpt/dnn/data/kernels-H200.json`` (``params``, the fit and its errors), to ``--output`` or
stdout. Errors (missing or malformed file, unknown GPU or model, no mixed-precision run) are one
line, exit 2.
"""

from __future__ import annotations

import datetime
import json
import sys

from ..errors import InvalidParameterError
from ._common import add_json, emit_json, format_table


def register(sub) -> None:
    p = sub.add_parser(
        "calibrate",
        help="fit the kernel model of a GPU type to measured training steps",
        description="Fit the roofline kernel model's constants (achieved compute and bandwidth "
                    "per operator class, per-kernel and host costs) to measured single-GPU "
                    "training steps, and write the parameter file the model reads.",
    )
    p.add_argument("measurements", nargs="+", metavar="MEASUREMENTS.json",
                   help="measurement files (runs of one GPU type)")
    p.add_argument("--gpu", required=True, metavar="GPU", help="the GPU measured (e.g. H200)")
    p.add_argument("--output", "-o", default=None, metavar="FILE",
                   help="write the parameter file here (default: stdout)")
    p.add_argument("--layers", action="store_true",
                   help="also fit the per-layer times of GPU-bound layers in the files' "
                        "per-layer tables (default: step times only)")
    p.add_argument("--fused-attention", action="store_true",
                   help="price the measured transformers' attention as one fused kernel "
                        "(PyTorch SDPA) at a fixed attention efficiency, as the runs did "
                        "(default: materialised eager scores, the shipped H200 fit's model)")
    p.add_argument("--apply-to", action="append", default=[], metavar="GPU",
                   help="also price this GPU with the fitted fractions of its own peaks "
                        "(repeatable; same architecture only)")
    p.add_argument("--max-nfev", type=int, default=2000, help="fit evaluation budget")
    add_json(p)
    p.set_defaults(func=run)


def payload(out: dict, sources: list, gpu: str) -> dict:
    """The parameter file written by ``asrpt calibrate`` (and shipped for the H200).

    Examples
    --------
    >>> from asrpt.dnn.roofline import KernelParams
    >>> out = {"params": KernelParams(), "errors": {"rows": [], "median": 0.0, "worst": 0.0},
    ...        "cost": 0.0, "nfev": 1, "models": []}
    >>> payload(out, [], "H200")["format"]
    'asrpt-kernels/1'
    """
    from ..dnn.kernel_fit import FIT_PARAMETERS, MEASURED_MODELS

    return {
        "format": "asrpt-kernels/1",
        "gpu": gpu,
        "params": out["params"].to_dict(),
        "fit": {
            "method": "scipy.optimize.least_squares (trf) on log step time"
                      + (" and on log per-layer times of GPU-bound layers" if out.get("layers")
                         else "") + ", parameters in log space, each model weighted equally",
            "free_parameters": list(FIT_PARAMETERS),
            "fused_attention": out["params"].attention_efficiency is not None,
            "models": out["models"],
            "measured_as": {m: MEASURED_MODELS[m][3] for m in out["models"]
                            if m in MEASURED_MODELS},
            "sources": sources, "cost": out["cost"], "nfev": out["nfev"],
            "date": datetime.date.today().isoformat(),
        },
        "errors": {"median": out["errors"]["median"], "worst": out["errors"]["worst"],
                   "rows": [{k: (round(v, 6) if isinstance(v, float) else v)
                             for k, v in r.items()} for r in out["errors"]["rows"]]},
    }


def run(args) -> int:
    import os
    from dataclasses import replace

    from ..dnn.hardware import gpu_spec
    from ..dnn.kernel_fit import fit_kernel_params, load_measurements

    gpu = gpu_spec(args.gpu).name
    apply = [gpu] + [gpu_spec(g).name for g in args.apply_to]
    runs, layers = [], []
    for path in args.measurements:
        r, L = load_measurements(path)
        runs += r
        layers += L
    if not runs:
        raise InvalidParameterError(f"{', '.join(args.measurements)}: no successful run")
    if args.max_nfev < 1:
        raise InvalidParameterError(f"--max-nfev must be at least 1, got {args.max_nfev}")
    out = fit_kernel_params(runs, gpu, max_nfev=args.max_nfev,
                            layers=layers if args.layers else (),
                            fused_attention=args.fused_attention)
    out["params"] = replace(out["params"], applies_to=tuple(dict.fromkeys(apply)))
    data = payload(out, [os.path.basename(p) for p in args.measurements], gpu)
    text = json.dumps(data, indent=1) + "\n"
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise InvalidParameterError(f"{args.output}: cannot write: {exc}") from None
    if args.json:
        emit_json(data)
    elif args.output:
        print(format_table(["parameter", "value"],
                           [[k, v] for k, v in data["params"].items()]))
        print(f"step-time error on the fitted runs: median {data['errors']['median']:.1%}, "
              f"worst {data['errors']['worst']:.1%}; wrote {args.output}")
    else:
        sys.stdout.write(text)
    return 0
