"""The shipped JSON Schema agrees with the loader on the fields and on valid instances."""

import glob
import json
import os
from importlib import resources

import pytest
from hypothesis import given

from asrpt.instance import _CLUSTER_FIELDS, _JOB_FIELDS, _SERVER_FIELDS, _TOP_FIELDS, instance_to_dict
from asrpt.testing.strategies import instances

jsonschema = pytest.importorskip("jsonschema")
ROOT = os.path.dirname(os.path.dirname(__file__))


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(resources.files("asrpt").joinpath("schema/instance.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_schema_names_exactly_the_loader_fields(validator):
    s = validator.schema
    assert set(s["properties"]) == set(_TOP_FIELDS)
    assert set(s["$defs"]["cluster"]["properties"]) == set(_CLUSTER_FIELDS)
    assert set(s["$defs"]["server"]["properties"]) == set(_SERVER_FIELDS)
    assert set(s["$defs"]["job"]["properties"]) == set(_JOB_FIELDS)


def test_bundled_instances_satisfy_the_schema(validator):
    files = sorted(glob.glob(os.path.join(ROOT, "instances", "*.json")))
    assert files
    for path in files:
        with open(path) as fh:
            errors = list(validator.iter_errors(json.load(fh)))
        assert not errors, (path, errors[0].message)


@given(instances(max_jobs=5, weighted=True, predictions=True, exact=True))
def test_saved_instances_satisfy_the_schema(validator, inst):
    assert not list(validator.iter_errors(instance_to_dict(inst)))


@pytest.mark.parametrize("bad", [
    {"cluster": {"servers": []}, "jobs": []},
    {"cluster": {"servers": [{"gpus": 2}]}, "jobs": [{"id": "a", "arrival": 0, "gpus": 1}]},
    {"cluster": {"servers": [{"gpus": 2}]}, "jobs": [{"id": "a", "arrival": -1, "gpus": 1, "processing_time": 1}]},
    {"cluster": {"servers": [{"gpus": 2}]}, "jobs": [{"id": "a", "arrival": 0, "gpus": 1, "processing_time": 1, "model": "gpt2", "iterations": 3}]},
    {"cluster": {"servers": [{"gpus": 2}]}, "jobs": [], "extra": 1},
])
def test_schema_rejects_what_the_loader_rejects(validator, bad):
    assert list(validator.iter_errors(bad))
