"""Start-up cost of the CLI: each command imports only what it uses (issue 18).

Checked as the set of heavy packages loaded in a fresh interpreter, not as a time (the CPU figures
are in benchmarks/bench_speed.py): ``--version`` and ``validate`` load none of numpy, scipy,
networkx, the ILP stack or matplotlib, and an abstract FIFO simulation none but numpy.
"""

import json
import subprocess
import sys

import pytest

HEAVY = ("numpy", "scipy", "networkx", "pulp", "highspy", "matplotlib", "sklearn", "pandas")

PROBE = """
import io, json, sys, contextlib
from asrpt.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        code = main(json.loads(sys.argv[1]))
    except SystemExit as exc:
        code = exc.code
print(json.dumps([code, sorted({m.split('.')[0] for m in sys.modules} & set(json.loads(sys.argv[2])))]))
"""


def loaded(argv):
    out = subprocess.run([sys.executable, "-c", PROBE, json.dumps(argv), json.dumps(HEAVY)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


@pytest.mark.parametrize("argv", [["--version"], ["validate", "instances/small-cluster.json"]])
def test_light_commands_load_no_heavy_package(argv):
    code, heavy = loaded(argv)
    assert code == 0 and heavy == []


def test_abstract_simulation_loads_neither_scipy_nor_the_placement_stack():
    code, heavy = loaded(["simulate", "instances/small-cluster.json", "--policy", "fifo,sjf",
                          "--placement", "first_fit"])
    assert code == 0 and set(heavy) <= {"numpy"}


def test_fifo_and_sjf_simulations_load_no_heavy_package():
    """FIFO and SJF with the oracle draw no random numbers and fit no model: not even numpy (the
    predictors and the seed helpers import it on first use)."""
    code, heavy = loaded(["simulate", "instances/small-cluster.json", "--policy", "fifo,sjf,sjf-duration",
                          "--placement", "first_fit"])
    assert code == 0 and heavy == []


def test_unknown_command_and_help_still_list_every_command():
    probe = subprocess.run([sys.executable, "-m", "asrpt", "nosuch"], capture_output=True, text=True)
    assert probe.returncode == 2 and "'worst-case'" in probe.stderr and "'validate'" in probe.stderr
    helped = subprocess.run([sys.executable, "-m", "asrpt", "--help"], capture_output=True, text=True)
    assert helped.returncode == 0 and "predict-eval" in helped.stdout
