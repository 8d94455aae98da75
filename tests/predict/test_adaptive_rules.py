"""The adaptive step's rules (``PredictionTracker.overrun``): what each returns for a job that has
done at least its predicted work, for any answer the predictor gives."""

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asrpt.errors import InvalidParameterError
from asrpt.predict.base import ADAPTIVE_RULES, DEFAULT_ADAPTIVE, PredictionTracker
from asrpt.sim.view import JobView
from asrpt.state import Predictor

JOB = JobView(0, "a", (0,), 0, 1, 1, True, 1)


class _Answers(Predictor):
    """Answers ``answer`` whenever it is asked given some work done."""

    parameter_constraints = {"answer": [object]}

    def __init__(self, answer):
        self.answer = answer

    def predict(self, job, *, attained=0, truth=None):
        return self.answer if attained else Fraction(1)


class _Did:
    def __init__(self, done):
        self.done = done

    def attained_work(self, job):
        return self.done


def _overrun(predicted, done, answer, rule):
    tracker = PredictionTracker(_Answers(answer).reset())
    tracker.set(JOB, predicted)
    return tracker.overrun(_Did(done), JOB, rule)


positive = st.fractions(min_value=Fraction(1, 64), max_value=64)


@settings(max_examples=200, deadline=None)
@given(positive, st.fractions(min_value=1, max_value=300), positive)
def test_each_rule_returns_what_it_says_and_always_more_than_the_work_done(predicted, ratio, answer):
    done = predicted * ratio                       # the job has reached its prediction
    doubled = _overrun(predicted, done, answer, "doubling")
    k = 0
    while predicted * 2 ** k <= done:
        k += 1
    assert doubled == predicted * 2 ** k and doubled > done >= doubled / 2
    assert _overrun(predicted, done, answer, "repredict") == (answer if answer > done else 2 * done)
    conditional = _overrun(predicted, done, answer, "conditional")
    assert conditional == max(answer, doubled) and conditional > done
    for rule in ADAPTIVE_RULES[1:]:
        assert type(_overrun(predicted, done, answer, rule)) is Fraction   # exact stays exact


def test_conditional_is_doubling_for_a_predictor_that_does_not_re_predict():
    # An answer at or below the work done (a static predictor's) leaves doubling's value.
    assert _overrun(Fraction(2), Fraction(5), Fraction(2), "conditional") == 8
    assert _overrun(Fraction(2), Fraction(5), Fraction(2), "repredict") == 10


def test_an_unknown_rule_is_refused_in_one_line():
    with pytest.raises(InvalidParameterError, match="rule must be one of"):
        _overrun(Fraction(1), Fraction(1), Fraction(3), "off")


def test_the_default_rule_is_conditional_in_both_policies_that_re_predict():
    from asrpt.policies import make_policy

    assert DEFAULT_ADAPTIVE == "conditional"
    assert make_policy("a-srpt").adaptive == make_policy("srsf").adaptive == DEFAULT_ADAPTIVE
    with pytest.raises(InvalidParameterError):
        make_policy('a-srpt:adaptive="halving"')


def test_the_default_run_uses_the_conditional_rule_with_the_capped_hierarchy():
    """On a recurring workload the default A-SRPT with the default predictor is the conditional
    rule over the capped re-prediction, and it is not doubling in effect there: the jobs'
    final predictions differ (the schedule happens not to, on this small workload)."""
    from asrpt.sim import simulate
    from asrpt.workloads import recurring_workload

    inst = recurring_workload(300, load=0.95, cluster="2x8", seed=3)
    default = simulate(inst, 'a-srpt:predictor="hierarchy"')
    spelled = simulate(inst, 'a-srpt:adaptive="conditional":predictor="hierarchy:repredict=capped"')
    doubling = simulate(inst, 'a-srpt:adaptive="doubling":predictor="hierarchy"')
    assert default.records == spelled.records and default.policy_data == spelled.policy_data
    assert default.policy_data["predictions"] != doubling.policy_data["predictions"]
    raised = [j for j, p in default.policy_data["predictions"].items()
              if p > doubling.policy_data["predictions"][j]]
    assert raised
