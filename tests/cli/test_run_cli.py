"""``asrpt run``: every policy that uses a prediction gets the same real predictor (the registry's
default), the table
says which, and the clairvoyant references appear only when asked."""

from asrpt.cli import main


def _run(capsys, tmp_path, *extra):
    code = main(["run", "--limit", "150", "--cluster", "4x8", "--no-dnn", "--policy", "a-srpt,srsf,fifo",
                 "--no-progress", "--out", str(tmp_path), *extra])
    out, _ = capsys.readouterr()
    return code, out


def test_every_prediction_using_policy_gets_the_default_predictor(capsys, tmp_path):
    from asrpt.predict.base import DEFAULT_PREDICTOR

    code, out = _run(capsys, tmp_path)
    assert code == 0
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines()[1:] if line.strip()}
    p = DEFAULT_PREDICTOR
    assert rows == {f"a-srpt[{p}]": p, f"srsf[{p}]": p, "fifo": "none"}
    assert (tmp_path / "jct_cdf.png").exists()


def test_oracle_references_only_when_asked_and_labelled(capsys, tmp_path):
    code, out = _run(capsys, tmp_path, "--oracle", "--predictor", "group_mean")
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines()[1:] if line.strip()}
    assert code == 0
    assert rows["a-srpt[group_mean]"] == "group_mean" and rows["a-srpt[oracle]"] == "oracle"
    assert rows["srsf[oracle]"] == "oracle" and len(rows) == 5
