"""``asrpt run``: every policy that uses a prediction gets the same real predictor (the registry's
default), the table
says which, and the clairvoyant references appear only when asked."""

from asrpt.cli import main


def _run(capsys, tmp_path, *extra, policies="a-srpt,srsf,fifo"):
    code = main(["run", "--limit", "150", "--cluster", "4x8", "--no-dnn", "--policy", policies,
                 "--no-progress", "--out", str(tmp_path), *extra])
    out, _ = capsys.readouterr()
    return code, out


def _table(out):
    """The table's rows, first column -> second (the lines up to the first blank one)."""
    lines = out.split("\n\n")[0].splitlines()[1:]
    return {line.split()[0]: line.split()[1] for line in lines if line.strip()}


def test_every_prediction_using_policy_gets_the_default_predictor(capsys, tmp_path):
    from asrpt.predict.base import DEFAULT_PREDICTOR

    code, out = _run(capsys, tmp_path)
    assert code == 0
    rows = _table(out)
    p = DEFAULT_PREDICTOR
    assert rows == {f"a-srpt[{p}]": p, f"srsf[{p}]": p, "fifo": "none"}
    assert (tmp_path / "jct_ccdf.png").exists() and not (tmp_path / "jct_cdf.png").exists()


def test_oracle_references_only_when_asked_and_labelled(capsys, tmp_path):
    code, out = _run(capsys, tmp_path, "--oracle", "--predictor", "group_mean")
    rows = _table(out)
    assert code == 0
    assert rows["a-srpt[group_mean]"] == "group_mean" and rows["a-srpt[oracle]"] == "oracle"
    assert rows["srsf[oracle]"] == "oracle" and len(rows) == 5


def test_variants_of_one_policy_get_their_own_rows_and_the_guard_is_reported(capsys, tmp_path):
    """Two A-SRPT variants print two labels (both printed "a-srpt[hierarchy]" before issue 45),
    and every guarded run gets a line saying how often its guard admitted an overdue job."""
    from asrpt.predict.base import DEFAULT_PREDICTOR as p

    code, out = _run(capsys, tmp_path, policies="a-srpt,a-srpt:kappa=1,srsf")
    assert code == 0
    assert set(_table(out)) == {f"a-srpt[{p}]", f"a-srpt:kappa=1[{p}]", f"srsf[{p}]"}
    guards = [line for line in out.splitlines() if line.startswith("guard of ")]
    assert [line.split(":")[0] for line in guards] == [f"guard of a-srpt[{p}]", "guard of a-srpt"]


def test_no_progress_bar_into_redirected_stderr(capsys, tmp_path):
    """The help says the bar is shown "when stderr is a terminal": redirected (as under pytest),
    stderr gets no carriage-return progress lines unless --progress asks for them."""
    main(["run", "--limit", "60", "--cluster", "2x8", "--no-dnn", "--policy", "fifo", "--out", str(tmp_path)])
    assert "\r" not in capsys.readouterr().err
    main(["run", "--limit", "60", "--cluster", "2x8", "--no-dnn", "--policy", "fifo", "--out", str(tmp_path),
          "--progress"])
    assert "\r" in capsys.readouterr().err
