"""asrpt.dnn.validate: DNN jobs checked by the instance loader (asrpt.loading), every problem with a
location."""

import pytest

from asrpt.dnn import validate
from asrpt.dnn.validate import instance_problems, job_problems
from asrpt.errors import InvalidInstance, InvalidParameterError
from asrpt.instance import Cluster, Job, Parallelism, Server
from asrpt.loading import parse_instance


def dnn_job(i, **kw):
    base = {"id": f"j{i}", "arrival": 0, "iterations": 10}
    base.update(kw)
    return base


def problems_of(jobs, cluster=None):
    data = {"cluster": cluster or {"servers": [{"gpus": 8, "count": 4}], "gpu_type": "A100"},
            "jobs": jobs}
    with pytest.raises(InvalidInstance) as info:
        parse_instance(data)
    return [str(p) for p in info.value.problems]


def test_valid_dnn_instance_loads():
    inst = parse_instance({"cluster": {"servers": [{"gpus": 8, "count": 2}], "gpu_type": "H100"},
                           "jobs": [dnn_job(0, model="gpt2", parallelism={"dp": 2, "pp": 2, "tp": 2}),
                                    dnn_job(1, model="resnet50", gpus=4, batch_size=128,
                                            precision="fp16")]})
    assert inst.n_jobs == 2


def test_unknown_model_gets_did_you_mean():
    assert problems_of([dnn_job(0, model="resnet5", gpus=1)]) == [
        "jobs[0].model: unknown model 'resnet5' (did you mean 'resnet50'?)"]
    assert problems_of([dnn_job(0, model="GPT-2", gpus=1)]) == [
        "jobs[0].model: unknown model 'GPT-2' (did you mean 'gpt2'?)"]


def test_unknown_gpu_types_on_cluster_and_servers():
    out = problems_of([dnn_job(0, model="gpt2", gpus=1)],
                      {"servers": [{"gpus": 8, "gpu_type": "A10O"}], "gpu_type": "H10"})
    assert out == ["cluster.gpu_type: unknown GPU type 'H10' (did you mean 'H100'?)",
                   "cluster.servers[0].gpu_type: unknown GPU type 'A10O' (did you mean 'A100'?)"]


def test_precision_problems():
    assert problems_of([dnn_job(0, model="gpt2", gpus=1, precision="fp61")]) == [
        "jobs[0].precision: unknown precision 'fp61' (did you mean 'fp16'?); known: fp32, tf32, "
        "fp16, bf16, fp8, amp, amp-bf16"]
    assert problems_of([dnn_job(0, model="gpt2", gpus=1, precision="fp8")]) == [
        "jobs[0].precision: fp8 is not supported by the cluster's GPUs (A100-80GB)"]


def test_pp_batch_and_memory_problems():
    out = problems_of([
        dnn_job(0, model="resnet18", parallelism={"pp": 8, "dp": 4}, batch_size=2),
        dnn_job(1, model="llama-70b", parallelism={"dp": 8}),
        dnn_job(2, model="vgg16", parallelism={"dp": 16}, batch_size=8),
    ], {"servers": [{"gpus": 8, "count": 8}], "gpu_type": "A100"})
    assert out[0] == ("jobs[0].batch_size: batch size 2 is smaller than dp = 4: every "
                      "data-parallel replica needs at least one sample")
    assert out[1].startswith("jobs[1].parallelism: model llama-70b (dp=8 pp=1 tp=1, batch 1024, ")
    assert "does not fit in GPU memory" in out[1] and "each A100-80GB has 77.3 GB usable" in out[1]
    assert out[2] == ("jobs[2].batch_size: batch size 8 is smaller than dp = 16: every "
                      "data-parallel replica needs at least one sample")
    pp_too_big = problems_of([dnn_job(0, model="resnet18", parallelism={"pp": 200})],
                             {"servers": [{"gpus": 8, "count": 25}]})
    assert pp_too_big == ["jobs[0].parallelism: pp = 200 exceeds the 68 layers of resnet18"]


def test_default_batch_smaller_than_dp_names_the_default():
    c = Cluster.homogeneous(64, 8, "A100")
    job = Job("x", 0, 512, model="resnet18_cifar", parallelism=Parallelism(512, 1, 1),
              iterations=1)
    assert job_problems(job, c) == [
        ("batch_size", "the default batch size of resnet18_cifar (128) is smaller than dp = 512: "
                       "every data-parallel replica needs at least one sample")]


def test_job_that_fits_only_on_one_gpu_type_is_valid():
    c = Cluster((Server(8, "V100-16GB"), Server(8, "H200")))
    job = Job("x", 0, 8, model="llama-1b", parallelism=Parallelism(8, 1, 1), iterations=1,
              batch_size=8)
    assert job_problems(job, c) == []
    only_v100 = Cluster((Server(8, "V100-16GB"),))
    assert [f for f, _ in job_problems(job, only_v100)] == ["parallelism"]


def test_abstract_jobs_and_instances_are_skipped():
    c = Cluster.homogeneous(1, 8, "NoSuchGPU")
    assert instance_problems(c, [Job("a", 0, 1, processing_time=3)]) == []
    assert job_problems(Job("a", 0, 1, processing_time=3), c) == []
    with pytest.raises(InvalidParameterError, match="The 'cluster' parameter of instance_problems"):
        instance_problems("cluster", [])


def test_checks_are_cached_per_distinct_configuration():
    c = Cluster.homogeneous(8, 8, "H100")
    jobs = [Job(f"j{i}", i, 4, model="gpt2", parallelism=Parallelism(2, 1, 2), iterations=5)
            for i in range(2000)]
    validate._config_problems.cache_clear()
    assert instance_problems(c, jobs) == []
    info = validate._config_problems.cache_info()
    assert info.misses == 1 and info.hits == 1999
