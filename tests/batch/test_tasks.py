"""Batch tasks: each one's figures equal the library's own answer, options are normalised and
checked at once, and execute() records an instance's failure instead of raising."""

import json

import pytest

from asrpt.batch.tasks import (TASKS, WorkItem, certify_task, compare_opt_task, execute, get_task,
                               instance_hash, normalize_options, opt_task, options_key, place_task,
                               simulate_task, srpt_task, task_names)
from asrpt.errors import InvalidParameterError
from asrpt.instance import Cluster, Instance, Job, dumps_instance
from asrpt.offline.opt import offline_opt
from asrpt.sim import simulate
from asrpt.single.virtual import virtual_schedule
from asrpt.theory import certify_instance
from asrpt.workloads.generators import adversarial_instance, dnn_instance, uniform_instance


@pytest.fixture(scope="module")
def small():
    return uniform_instance(5, cluster="1x4", max_processing_time=5, mu=2, seed=3)


def item(inst_or_bytes, task, **options):
    data = inst_or_bytes if isinstance(inst_or_bytes, bytes) else dumps_instance(inst_or_bytes).encode()
    return WorkItem("x.json", instance_hash(data), task, normalize_options(task, options), data)


def test_figures_are_the_libraries_answers(small):
    s = virtual_schedule(small, predicted=True)
    f = srpt_task(small, predicted=True)
    assert f["total_completion_time"] == pytest.approx(float(s.total_completion_time))
    assert f["makespan"] == pytest.approx(float(s.makespan)) and f["n_jobs"] == 5
    o = offline_opt(small)
    f = opt_task(small)
    assert (f["lower_bound"], f["upper_bound"], f["status"]) == (o.lower_bound, o.upper_bound, o.status)
    assert f["bounds"]["lb1"] == pytest.approx(float(o.bounds.lb1))
    c = certify_instance(small)
    f = certify_task(small)
    assert f["holds"] == c.holds and f["ratio_to_lb"] == pytest.approx(float(c.ratio_to_lb))
    assert f["mu"] == pytest.approx(float(c.mu)) and f["failures"] == c.failures()
    r = simulate(small, "fifo")
    f = simulate_task(small, policy="fifo")
    assert f["policy"] == "fifo" and f["mean_jct"] == pytest.approx(float(r.summary["mean_jct"]))
    assert "wall_time" not in f


def test_figures_are_json_and_deterministic(small):
    for name in task_names():
        if name == "place":
            continue
        a = TASKS[name].function(small)
        assert json.loads(json.dumps(a, allow_nan=False)) == a
        assert TASKS[name].function(small) == a


def test_place_places_every_dnn_job_and_refuses_abstract_instances(small):
    inst = dnn_instance(3, cluster="2x8", models=["gpt2", "resnet50"], seed=1)
    f = place_task(inst, method="best_fit")
    assert f["placed"] == 3 and f["abstract"] == 0 and f["stretch_max"] >= f["stretch_mean"] >= 1
    assert sum(f["statuses"].values()) == 3
    with pytest.raises(InvalidParameterError, match="no DNN job"):
        place_task(small)
    with pytest.raises(InvalidParameterError, match="unknown placement method 'bestfit'"):
        place_task(inst, method="bestfit")


def test_opt_reads_rational_slots_exactly(small):
    assert opt_task(small, slot="1/2")["slot"] == 0.5
    with pytest.raises(InvalidParameterError, match="'slot' parameter of opt_task"):
        opt_task(small, slot="half")


def test_normalize_fills_defaults_sorts_keys_and_rejects_bad_options():
    n = normalize_options("certify", {"seed": 2})
    assert list(n) == sorted(n) and n["seed"] == 2 and n["predictor"] == "instance" and n["exact"] is False
    assert options_key(n) == options_key(normalize_options("certify", {"seed": 2, "backfill": True}))
    with pytest.raises(InvalidParameterError, match=r"no option 'sead' \(did you mean 'seed'\?\)"):
        normalize_options("certify", {"sead": 1})
    with pytest.raises(InvalidParameterError, match=r"The 'seed' parameter of certify \(task option\)"):
        normalize_options("certify", {"seed": -1})
    with pytest.raises(InvalidParameterError, match="must be a JSON scalar"):
        normalize_options("srpt", {"predicted": [True]})
    with pytest.raises(InvalidParameterError, match="'slot' parameter of opt_task"):
        normalize_options("opt", {"slot": "x"})
    with pytest.raises(InvalidParameterError, match="unknown task 'sprt'"):
        get_task("sprt")


def test_execute_records_failures_and_reads_exactly(small):
    ok = execute(item(small, "certify"))
    assert ok["status"] == "ok" and ok["error"] is None and ok["figures"]["holds"] is True
    assert ok["wall_time"] > 0 and ok["worker"].startswith("pid:")
    bad = execute(item(b'{"cluster": {"servers": [{"gpus": 2}]}, "jobs": [{"id": "a"}]}', "srpt"))
    assert bad["status"] == "error" and bad["figures"] is None
    assert bad["error"].startswith("InvalidInstance: x.json: jobs[0]") and "\n" not in bad["error"]
    assert execute(item(b"\xff\xfe", "srpt"))["error"].startswith("not UTF-8 text")
    assert execute(item(small, "place"))["error"].startswith("InvalidParameterError: place:")
    floaty = Instance(Cluster.homogeneous(1, 2), (Job("a", 0.1, 1, processing_time=0.2),))
    assert execute(item(floaty, "certify", exact=True))["figures"]["exact"] is True
    assert execute(item(floaty, "certify"))["figures"]["exact"] is False


def test_adversarial_instances_certify_with_a_ratio_above_one():
    f = certify_task(adversarial_instance(5, gpus=4, mu=4, seed=0))
    assert f["holds"] and f["ratio_to_lb"] > 1.5 and f["mu"] == 4


def test_compare_opt_recomputes_each_policys_ratio_to_the_optimum(small):
    """Issue 46: "my policy against OPT" in one task. Each ratio is the simulator's own total
    over offline_opt's answer, computed once for all the policies; OPT is the pool's optimum
    at the best processing times, so no policy gets below it (a ratio under 1 would be a bug)."""
    from fractions import Fraction

    f = compare_opt_task(small, policies="a-srpt,fifo,srsf")
    o = offline_opt(small, time_limit=10)
    assert (f["opt_lower"], f["opt_upper"], f["opt_closed"]) == (o.lower_bound, o.upper_bound, o.closed)
    assert [r["policy"] for r in f["results"]] == ["a-srpt", "fifo", "srsf"]
    for r in f["results"]:
        total = simulate(small, r["policy"]).summary["total_weighted_completion_time"]
        assert r["total_weighted_completion_time"] == pytest.approx(float(total))
        assert r["ratio_to_opt_high"] == pytest.approx(float(Fraction(total) / Fraction(o.lower_bound)))
        assert r["ratio_to_opt_high"] >= 1 and (r["ratio_to_opt"] is None) == (not o.closed)
    for seed in range(6):       # gangs on two servers, predictions off by up to 4x
        inst = uniform_instance(6, cluster="2x4", max_processing_time=6, mu=4, seed=seed)
        for r in compare_opt_task(inst, policies="a-srpt,fifo,tiresias,sjf")["results"]:
            assert r["ratio_to_opt_high"] >= 1, (seed, r)


def test_compare_opt_refuses_bad_policy_lists(small):
    for policies, message in (("", "names no policy"), ("fifo,fifo", "'fifo' twice"), ("fifo,fiffo", "fiffo")):
        with pytest.raises(InvalidParameterError, match=message):
            compare_opt_task(small, policies=policies)


def test_compare_opt_rows_flatten_and_key_on_user_code(tmp_path, monkeypatch):
    """ratio_rows gives one record per instance and policy; a policy file's content is part of
    the resume key (editing it makes the rows stale)."""
    from asrpt.batch import ratio_rows, read_results, run_batch
    from asrpt.instance import save_instance

    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text(
        "from asrpt.policies import Decision, Policy\n\n\nclass Mine(Policy):\n"
        "    def decide(self, view):\n        return Decision(list(view.waiting))\n")
    for seed in range(2):
        save_instance(uniform_instance(4, cluster="1x4", max_processing_time=4, seed=seed), f"i{seed}.json")
    options = {"policies": "fifo,mine.py:Mine", "opt_time_limit": 5}
    run_batch(["i0.json", "i1.json"], "compare-opt", out="r.jsonl", options=options, jobs=1)
    rows = ratio_rows(read_results("r.jsonl"))
    assert sorted((r["path"], r["policy"]) for r in rows) == [
        ("i0.json", "fifo"), ("i0.json", "mine.py:Mine"), ("i1.json", "fifo"), ("i1.json", "mine.py:Mine")]
    assert all(r["ratio_to_opt_high"] >= 1 for r in rows)
    assert run_batch(["i0.json", "i1.json"], "compare-opt", out="r.jsonl", options=options, jobs=1).skipped == 2
    with open("mine.py", "a", encoding="utf-8") as fh:
        fh.write("# edited\n")
    assert run_batch(["i0.json", "i1.json"], "compare-opt", out="r.jsonl", options=options, jobs=1).skipped == 0
    again = ratio_rows(read_results("r.jsonl"))     # the edited file's rows replace the old ones
    assert len(again) == 4 and {r["sources"]["mine.py"] for r in again} != {r["sources"]["mine.py"] for r in rows}


def test_compare_opt_sums_the_run_exactly():
    """A referee's case: three jobs on three GPUs, every schedule optimal; summing the floats
    gave 1.9 against the optimum's 1.9000000000000001, a ratio of 0.9999999999999999."""
    inst = Instance(Cluster.homogeneous(1, 3), (Job("a", 0, 1, processing_time=0.1),
                                                Job("b", 0, 1, processing_time=0.7), Job("c", 0, 1, processing_time=1.1)))
    (r,) = compare_opt_task(inst, policies="fifo")["results"]
    assert r["ratio_to_opt"] == 1.0
