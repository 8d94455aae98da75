"""benchmarks/eval_asrpt.py, the evaluation behind docs/asrpt.md's tables, still runs: its table,
the per-class parts of the mean JCT (which sum to the mean), the waiting-time figure, user
policies by file (the issue-45 prototypes), and the predictor each run used."""

import importlib.util
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("asrpt_eval_script", ROOT / "benchmarks" / "eval_asrpt.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_eval_script_table_classes_plot_and_prototypes(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    proto = "benchmarks/prototypes_issue45.py"
    policies = (f"a-srpt,tiresias,{proto}:Lindy,{proto}:SRSFQuantum,{proto}:SRSFProtect,"
                f"{proto}:ConditionalGittins,srsf:predictor=oracle")
    out = tmp_path / "e.json"
    assert _script().main(["--workloads", "recurring", "--recurring-jobs", "120", "--policies", policies,
                           "--classes", "tiresias", "--json", str(out), "--plot", str(tmp_path / "w.pdf")]) == 0
    printed = capsys.readouterr().out
    assert "its difference to tiresias" in printed
    rows = json.loads(out.read_text())
    assert [r["policy"] for r in rows] == policies.split(",")
    # every policy that takes a predictor gets --predictor (hierarchy) unless its spec sets one:
    # the oracle of srsf's spec was once overridden by the script's own copy of the rule
    assert [r["predictor"] for r in rows] == ["hierarchy", "none"] + ["hierarchy"] * 4 + ["oracle"]
    for r in rows:
        assert abs(sum(r["mean_jct_part_by_size"]) - r["mean_jct"]) < 1e-6 * r["mean_jct"]
        assert sum(r["jobs_by_size"]) == 120
    assert (tmp_path / "w.pdf").read_bytes()[:4] == b"%PDF"
