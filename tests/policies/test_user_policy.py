"""A user's own policy from the command line (docs/policies.md): the documented example runs
through ``asrpt simulate --policy FILE:CLASS`` and ``MODULE:CLASS``, and bad specs are one-line
errors."""

import json
import pathlib
import re
import sys

import pytest

from asrpt.cli import main
from asrpt.instance import Cluster, Instance, Job
from asrpt.sim import simulate

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "policies.md"
INSTANCE = "instances/small-cluster.json"


def example_blocks() -> list[str]:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 3, ("docs/policies.md should hold three python blocks: the plain contract, a complete "
                              "policy, a policy that uses predictions")
    return blocks


def example_code() -> str:
    """The complete policy (the page's second block)."""
    return example_blocks()[1]


@pytest.fixture
def policy_file(tmp_path):
    path = tmp_path / "my_policy.py"
    path.write_text(example_code(), encoding="utf-8")
    return path


def test_the_documented_example_is_about_twenty_lines():
    lines = [ln for ln in example_code().splitlines() if ln.strip()]
    assert 12 <= len(lines) <= 25


def test_the_page_leads_with_a_ten_line_preemptive_policy_that_runs(tmp_path, capsys):
    """Issue 44: the plain contract first, with a 10-line example, run as the page says."""
    code = example_blocks()[0]
    assert len([ln for ln in code.splitlines() if ln.strip()]) <= 10
    path = tmp_path / "my_policy.py"
    path.write_text(code, encoding="utf-8")
    assert main(["simulate", INSTANCE, "--policy", f"{path}:LeastServiceFirst,tiresias", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    assert [r["policy"] for r in results] == ["LeastServiceFirst", "tiresias"]
    inst = Instance(Cluster.homogeneous(1, 1), [Job("a", 0, 1, processing_time=4), Job("b", 0, 1, processing_time=2),
                                                Job("c", 1, 1, processing_time=1)])
    res = simulate(inst, f"{path}:LeastServiceFirst", check_invariants=True)
    assert {r.id: r.completion for r in res.records} == {"a": 7, "b": 3, "c": 4}   # b overtakes a at c's arrival


def test_the_documented_policy_runs_from_the_command_line(policy_file, capsys):
    code = main(["simulate", INSTANCE, "--policy", f"{policy_file}:FewestGPUsFirst,fifo", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    labels = [r["policy"] for r in out["results"]]
    assert labels == ["fewest-gpus", "fifo"]
    assert all(r["summary"]["finished"] == out["jobs"] for r in out["results"])


def test_parameters_of_a_user_policy_and_its_order(policy_file, capsys):
    inst = Instance(Cluster.homogeneous(1, 4), (Job("a", 0, 3, processing_time=1),
                                                Job("b", 0, 1, processing_time=1),
                                                Job("c", 0, 2, processing_time=1)))
    res = simulate(inst, f"{policy_file}:FewestGPUsFirst", check_invariants=True)
    assert {r.id: r.start for r in res.records} == {"a": 1, "b": 0, "c": 0}
    assert {r.id: r.start for r in simulate(inst, "fifo").records} == {"a": 0, "b": 0, "c": 1}
    code = main(["simulate", INSTANCE, "--policy", f"{policy_file}:FewestGPUsFirst:backfill=false",
                 "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["results"][0]["policy"] == f"{policy_file}:FewestGPUsFirst:backfill=false"


def test_a_user_policy_by_module_path(policy_file, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(policy_file.parent))
    monkeypatch.delitem(sys.modules, "my_policy", raising=False)
    code = main(["simulate", INSTANCE, "--policy", "my_policy:FewestGPUsFirst", "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["results"][0]["policy"] == "fewest-gpus"


@pytest.mark.parametrize("spec, message", [
    ("nosuch_module_xyz:Policy", "cannot import 'nosuch_module_xyz'"),
    ("nosuch/file.py:Policy", "no such file"),
    ("asrpt.policies.fifo:Nope", "has no class 'Nope'"),
    ("asrpt.policies.base:Registry", "is not a subclass of asrpt.policies.Policy"),
    ("asrpt.policies.fifo:FIFO:bogus=1", "has no parameter 'bogus'"),
])
def test_bad_user_policies_are_one_line_errors(spec, message, capsys):
    code = main(["simulate", INSTANCE, "--policy", spec])
    err = capsys.readouterr().err.strip()
    assert code != 0 and message in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_the_documented_prediction_policy_takes_the_predictor_option(tmp_path, capsys):
    """Issue 46: a user policy gets --predictor as the registered ones do, and the table names it."""
    path = tmp_path / "my_policy.py"
    path.write_text(example_blocks()[2], encoding="utf-8")
    spec = f"{path}:ShortestPredictedFirst"
    assert main(["simulate", INSTANCE, "--policy", f"{spec},srsf", "--predictor", "instance", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    assert [r["options"]["policy_params"]["predictor"] for r in results] == ["instance", "instance"]
    inst = Instance(Cluster.homogeneous(1, 1), [Job("a", 0, 1, processing_time=4, predicted_processing_time=1),
                                                Job("b", 0, 1, processing_time=2, predicted_processing_time=3)])
    res = simulate(inst, f'{spec}:predictor="instance"', check_invariants=True)
    assert {r.id: r.completion for r in res.records} == {"a": 4, "b": 6}    # a, predicted shorter, runs first
    res = simulate(inst, f'{spec}:predictor="oracle"', check_invariants=True)
    assert {r.id: r.completion for r in res.records} == {"a": 6, "b": 2}


def test_the_example_policy_file_is_the_pages_first_block(capsys):
    """docs/examples/my_policy.py (the README's compare-opt tour names it) is the page's first
    example, and it runs by path."""
    example = DOC.parent / "examples" / "my_policy.py"
    assert example.read_text(encoding="utf-8").endswith(example_blocks()[0])
    assert main(["simulate", INSTANCE, "--policy", f"{example}:LeastServiceFirst", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["summary"]["finished"] == 8
