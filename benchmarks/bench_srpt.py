"""Speed targets of the single-machine core.

- ``srpt_schedule`` on 10^6 random jobs (Poisson arrivals, exponential sizes, load 0.9, floats):
  target under 3 s on the 2-core reference machine.
- The same loop on 10^5 jobs with exact integers, and the incremental ``SRPTMachine`` driven
  event by event on 10^5 jobs (what A-SRPT does).

Run with ``pytest benchmarks/bench_srpt.py --benchmark-only -m "slow or not slow" -o addopts=""``.
"""

import numpy as np

from asrpt.single import SRPTMachine, srpt_schedule


def _jobs(n, seed=0, load=0.9, shuffle=True):
    """Poisson arrivals (rate 1), exponential sizes (mean ``load``); job indices in random order
    unless ``shuffle=False`` (so the sort by release does real work)."""
    rng = np.random.default_rng(seed)
    releases = np.cumsum(rng.exponential(1.0, n))
    sizes = rng.exponential(load, n)
    if shuffle:
        perm = rng.permutation(n)
        releases, sizes = releases[perm], sizes[perm]
    return releases.tolist(), sizes.tolist()


def test_srpt_one_million_jobs(benchmark):
    releases, sizes = _jobs(10**6)
    s = benchmark.pedantic(srpt_schedule, args=(releases, sizes), rounds=5, iterations=1)
    assert s.n == 10**6 and len(s.pieces) < 2 * 10**6
    benchmark.extra_info["pieces"] = len(s.pieces)
    assert benchmark.stats.stats.median < 3.0


def test_srpt_exact_integers_1e5(benchmark):
    rng = np.random.default_rng(1)
    releases = np.cumsum(rng.integers(0, 20, 10**5)).tolist()
    sizes = rng.integers(1, 19, 10**5).tolist()
    s = benchmark.pedantic(srpt_schedule, args=(releases, sizes), rounds=5, iterations=1)
    assert all(isinstance(c, int) for c in s.completion_times[:100])


def test_srpt_machine_incremental_1e5(benchmark):
    releases, sizes = _jobs(10**5, seed=2, shuffle=False)  # driven in arrival order

    def drive():
        m = SRPTMachine(tie_key=int)
        for j, (r, p) in enumerate(zip(releases, sizes)):
            m.advance(r)
            m.add(j, r, p)
            m.priority_order() if j % 1000 == 0 else None
        m.run()
        return m

    m = benchmark.pedantic(drive, rounds=3, iterations=1)
    assert m.n_unfinished == 0 and len(m.completion_times()) == 10**5
