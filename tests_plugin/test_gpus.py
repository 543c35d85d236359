"""One GPU per xdist worker: the pinning logic, with fake device lists."""
import pytest

from stackcheck.gpus import ENV_LIST, gpu_for_worker, pin, visible_gpus

pytestmark = pytest.mark.meta


def test_workers_get_distinct_gpus_then_share_round_robin():
    assert [gpu_for_worker(f"gw{i}", ["0", "1"]) for i in range(4)] == ["0", "1", "0", "1"]
    assert gpu_for_worker("gw0", []) is None
    assert gpu_for_worker("master", ["0"]) is None


def test_visible_gpus_respects_cuda_visible_devices():
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "2,3"}) == ["2", "3"]
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": ""}) == []
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "-1"}) == []


def test_controller_records_gpus_and_each_worker_pins_its_own():
    controller = {"CUDA_VISIBLE_DEVICES": "4,5"}
    assert pin(controller) is None and controller[ENV_LIST] == "4,5"
    pinned = []
    for worker in ("gw0", "gw1"):
        env = {**controller, "PYTEST_XDIST_WORKER": worker}
        pinned.append(pin(env))
        assert env["CUDA_VISIBLE_DEVICES"] == pinned[-1]
    assert pinned == ["4", "5"]


def test_worker_without_gpus_changes_nothing():
    env = {"PYTEST_XDIST_WORKER": "gw1", ENV_LIST: ""}
    assert pin(env) is None and "CUDA_VISIBLE_DEVICES" not in env
