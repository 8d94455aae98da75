"""The virtual single machine: sizes g P / M (true or predicted), the virtual SRPT schedule."""

from fractions import Fraction

import pytest
from hypothesis import given

from asrpt.errors import InvalidParameterError
from asrpt.instance import Cluster, Instance, Job
from asrpt.single import srpt_schedule, virtual_schedule, virtual_sizes
from asrpt.testing.strategies import instances

WORKED = Instance(Cluster.homogeneous(1, 4), (
    Job("A", 0, 2, processing_time=4),
    Job("B", 0, 4, processing_time=1),
    Job("C", 1, 1, processing_time=2),
))


def test_model_md_section_9_worked_example():
    assert virtual_sizes(WORKED) == (2, 1, Fraction(1, 2))
    s = virtual_schedule(WORKED)
    assert s.by_id() == {"A": Fraction(7, 2), "B": 1, "C": Fraction(3, 2)}
    assert s.total_completion_time == 6
    assert [WORKED.jobs[j].id for j in s.finishing_order] == ["B", "C", "A"]


def test_predicted_sizes_use_each_jobs_prediction_where_given():
    inst = Instance(Cluster.homogeneous(2, 4), (
        Job("a", 0, 2, processing_time=4, predicted_processing_time=6),
        Job("b", 1, 8, processing_time=1),
    ))
    assert virtual_sizes(inst) == (1, 1)
    assert virtual_sizes(inst, predicted=True) == (Fraction(3, 2), 1)
    # with predictions a has 1/2 left at t=1, less than b's 1: a runs on
    assert virtual_schedule(inst, predicted=True).by_id() == {"a": Fraction(3, 2), "b": Fraction(5, 2)}


def test_ties_follow_job_ids_naturally():
    inst = Instance(Cluster.homogeneous(1, 2), (Job("j10", 0, 2, processing_time=1),
                                                Job("j9", 0, 2, processing_time=1)))
    assert virtual_schedule(inst).by_id() == {"j10": 2, "j9": 1}


@given(instances(exact=True, predictions=True))
def test_virtual_schedule_is_srpt_on_squashed_sizes(inst):
    m = inst.cluster.total_gpus
    for predicted in (False, True):
        p = [j.predicted_processing_time if predicted and j.predicted_processing_time is not None
             else j.processing_time for j in inst.jobs]
        expected = tuple(Fraction(j.gpus) * Fraction(q) / m for j, q in zip(inst.jobs, p))
        sizes = virtual_sizes(inst, predicted=predicted)
        assert sizes == expected
        assert all(not isinstance(x, float) for x in sizes)
        s = virtual_schedule(inst, predicted=predicted)
        assert s.completion_times == srpt_schedule([j.arrival for j in inst.jobs], list(expected),
                                                   ids=[j.id for j in inst.jobs]).completion_times


@given(instances())
def test_float_instance_gives_float_or_exact_sizes_consistently(inst):
    sizes = virtual_sizes(inst)
    for job, x in zip(inst.jobs, sizes):
        assert x * inst.cluster.total_gpus == job.gpus * job.processing_time


@pytest.mark.parametrize("call, message", [
    (lambda: virtual_sizes("inst"), "'instance' parameter of virtual_sizes must be an instance of asrpt.instance.Instance"),
    (lambda: virtual_sizes(WORKED, predicted=1), "'predicted' parameter of virtual_sizes must be a bool"),
    (lambda: virtual_schedule(None), "'instance' parameter of virtual_schedule"),
])
def test_invalid_parameters(call, message):
    with pytest.raises(InvalidParameterError, match=message):
        call()
