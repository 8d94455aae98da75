"""Cross-validation against a second published simulator (issue 19): the Tiresias simulator's
(NSDI'19) decisions on 2,000 real Philly jobs, job for job, for its 19 shared configurations.

The peer's rules (docs/peers.md) are expressed with asrpt options: the Tiresias reader (integer
times, stable arrival order), the ``tiresias-peer`` family of presets of the Tiresias policy (list
order inside queues, demotions at the peer's events, the starvation knob and the Gittins variant),
the peer's preemptive SJF family, ``fifo-strict``/``fifo`` for its fifo/fjf, and the ``yarn``
placer on clusters with switches. The peer's "count" scheme is one pool of GPUs: a one-server
cluster of the same size. Every job's first start, finish and preemption count, and every yarn
placement ("switch.node:GPUs;..."), must match.
"""

import csv
import os

import pytest

from asrpt.instance import Cluster, Server
from asrpt.sim import simulate
from asrpt.traces import read_tiresias, shared_path
from asrpt.traces.tiresias import read_tiresias_cluster

PEER = shared_path("peer-tiresias")
pytestmark = pytest.mark.skipif(not os.path.isdir(PEER), reason="peer data not present (set ASRPT_SHARED)")

CONFIGS = ["dlas-gpu-2_count_16x8", "dlas-gpu-gittins_count_16x8", "dlas-gpu-gittins_count_64x8",
           "dlas-gpu_count_16x8", "dlas-gpu_count_4x32x4", "dlas-gpu_count_64x8", "dlas-gpu_yarn_64x8",
           "dlas_count_64x8", "fifo_count_16x8", "fifo_count_64x8", "fifo_yarn_16x8", "fifo_yarn_4x32x4",
           "fifo_yarn_64x8", "fjf_count_16x8", "fjf_yarn_16x8", "fjf_yarn_64x8", "shortest-gpu_count_16x8",
           "shortest-gpu_count_64x8", "shortest_count_16x8", "shortest_count_64x8", "sjf_count_16x8",
           "sjf_count_64x8"]

SPECS = {"n64g8.csv": "64x8", "n16g8.csv": "16x8", "r4n32g4.csv": "4x32x4"}

POLICY = {"fifo": "fifo-strict", "fjf": "fifo", "dlas-gpu": "tiresias-peer",
          "dlas": "tiresias-peer:service=time", "dlas-gpu-2": "dlas-gpu-2",
          "dlas-gpu-gittins": "dlas-gpu-gittins", "sjf": "tiresias-sjf", "shortest": "tiresias-shortest",
          "shortest-gpu": "tiresias-shortest-gpu"}


def setup(config):
    schedule, scheme, shape = config.split("_")
    spec_file = next(f for f, s in SPECS.items() if s == shape)
    cluster = read_tiresias_cluster(os.path.join(PEER, spec_file))
    # dlas always counts GPUs (yarn only changes what it logs); the peer's sjf family runs with count
    yarn = scheme == "yarn" and schedule in ("fifo", "fjf")
    if not yarn:
        cluster = Cluster((Server(cluster.total_gpus),))
    return cluster, POLICY[schedule], ("yarn" if yarn else "first_fit"), yarn


def test_the_cluster_specs_are_read_with_their_switches():
    cluster = read_tiresias_cluster(os.path.join(PEER, "r4n32g4.csv"))
    assert (cluster.n_switches, cluster.servers_per_switch, cluster.server_gpus[0], cluster.total_gpus) == (4, 32, 4, 512)
    assert read_tiresias_cluster(os.path.join(PEER, "n16g8.csv")).server_gpus == (8,) * 16


@pytest.mark.parametrize("config", CONFIGS)
def test_every_job_starts_finishes_and_is_preempted_as_the_peer_decided(config):
    cluster, spec, placement, yarn = setup(config)
    instance, report = read_tiresias(os.path.join(PEER, "input_philly-40000-2000.csv"), cluster)
    assert report.jobs == 2000 and not report.malformed and not report.notes
    result = simulate(instance, spec, placement=placement)
    ours = {r.id: r for r in result.records}
    with open(os.path.join(PEER, f"philly-40000-2000_{config}.csv")) as fh:
        peer = list(csv.DictReader(fh))
    assert len(peer) == 2000
    per = cluster.servers_per_switch or cluster.n_servers
    for row in peer:
        r = ours[row["job_id"]]
        mine = (r.start, r.completion, r.preemptions)
        theirs = (int(row["start_time"]), int(row["end_time"]), int(row["preempt"]))
        if yarn:
            mine += (";".join(f"{h // per}.{h % per}:{g}" for h, g in r.segments[-1].servers),)
            theirs += (row["placement"],)
        assert mine == theirs, (f"{config}: first differing job {row['job_id']}: peer (start, end, preempt"
                                f"{', placement' if yarn else ''}) = {theirs}, asrpt = {mine}")
        assert isinstance(r.start, int) and isinstance(r.completion, int)  # the integer clock is kept
