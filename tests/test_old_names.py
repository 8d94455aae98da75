"""The old spellings (issue 16): the placement methods best_fit and spread (now consolidate and
spread_workers, so they do not collide with the count placers of the same names) and the
workload recurring (now recurring_users, not the generator family recurring) are still read,
resolve to the very same object as the new name, and no listing shows them."""

import pytest

from asrpt.batch.tasks import TASKS
from asrpt.cli import main
from asrpt.placement import METHODS, PLACERS, available_methods, make_method, place
from asrpt.placement.heuristics import BestFit, Spread
from asrpt.policies import POLICIES
from asrpt.predict import PREDICTORS
from asrpt.workloads import FAMILIES, WORKLOADS, make_workload, recurring_workload

OLD = [(METHODS, "best_fit", "consolidate"), (METHODS, "spread", "spread_workers"),
       (WORKLOADS, "recurring", "recurring_users")]


@pytest.mark.parametrize("registry, old, new", OLD)
def test_an_old_name_resolves_to_the_object_of_the_new_one(registry, old, new):
    assert registry[old] is registry[new]
    assert old in registry and registry.canonical(old) == new
    assert old not in registry.names() and new in registry.names()
    assert old not in dict(registry.describe())
    assert not any(line.split()[0] == old for line in registry.listing().splitlines())


def test_the_old_names_still_work():
    assert METHODS["best_fit"] is BestFit and METHODS["spread"] is Spread
    assert WORKLOADS["recurring"] is recurring_workload
    assert isinstance(make_method("best_fit"), BestFit) and make_method("best_fit").name == "best_fit"
    assert {"best_fit", "spread", "consolidate", "spread_workers"} <= set(available_methods())
    import networkx as nx

    G = nx.path_graph(6)  # a worker graph: six workers in a chain, one byte per edge
    nx.set_edge_attributes(G, 1.0, "bytes")
    assert place(G, [4, 4], method="best_fit").assignment == place(G, [4, 4], method="consolidate").assignment
    assert place(G, [3, 3, 3], method="spread").assignment == \
        place(G, [3, 3, 3], method="spread_workers").assignment
    assert make_workload("recurring:n_jobs=5:seed=1") == make_workload("recurring_users:n_jobs=5:seed=1")


def _listed(argv, capsys):
    assert main(argv) == 0
    return [line.split()[0] for line in capsys.readouterr().out.splitlines() if line[:1].strip()]


@pytest.mark.parametrize("argv, registry", [
    (["simulate", "--list-policies"], POLICIES), (["simulate", "--list-placers"], PLACERS),
    (["simulate", "--list-predictors"], PREDICTORS), (["generate", "--list-families"], FAMILIES),
    (["batch", "--list-tasks"], TASKS)])
def test_every_list_option_shows_the_registered_names_only(argv, registry, capsys):
    assert _listed(argv, capsys) == list(registry.names())
    assert not set(registry.aliases())


def test_the_method_choices_show_the_new_names_and_accept_the_old(capsys):
    with pytest.raises(SystemExit):
        main(["place", "--help"])
    usage = capsys.readouterr().out
    assert "consolidate" in usage and "spread_workers" in usage
    assert "best_fit" not in usage and "{spread," not in usage and ",spread," not in usage
    assert "best_fit" in METHODS.choices() and "best_fit" not in list(METHODS.choices())
