"""The grading's warm-up (stackcheck.grading.grader.warm_caches): with --jobs N, N judges grade the course's
solutions at once, each on its share of the tests (--homework-shard), and their compile caches and
lists of ungradable tests are joined into the one template every submission starts from."""

import json

import pytest

from stackcheck.grading import grader

pytestmark = pytest.mark.meta

SOLUTION = "ASSIGNED = ('math',)\n\ndef torch_compiled_forward(x, w, b):\n    raise NotImplementedError\n"
TESTS = ("tests_math/test_x_numerics.py", "tests_math/test_s2_1_shapes.py", "tests_math/test_mc13_bitwise.py")


def _collected(pytester, suite_file, *options: str) -> list:
    folder = pytester.path / "hw"
    folder.mkdir(exist_ok=True)
    (folder / "homework.py").write_text(SOLUTION)
    tests = [suite_file(t) for t in TESTS]
    reprec = pytester.inline_run(f"--homework={folder}", *tests, "--collect-only", "-p", "no:cacheprovider", *options)
    return reprec.getcalls("pytest_collection_finish")[0].session.items


def test_the_shards_deal_every_test_once_and_the_compiles_evenly(pytester, suite_file):
    whole = _collected(pytester, suite_file)
    shares = [_collected(pytester, suite_file, f"--homework-shard={k}/2") for k in (1, 2)]
    ids = [[item.nodeid for item in share] for share in shares]
    assert sorted(ids[0] + ids[1]) == sorted(item.nodeid for item in whole), "a test dealt twice or never"

    here = {"cpu", *(["cuda"] if torch_sees_a_gpu() else [])}

    def compiles(items):  # torch.compile's tests that run here: the warm-up's cold compiles
        runs = [i for i in items if i.get_closest_marker("torch_compile") and here & {m.name for m in i.iter_markers()}]
        return len(runs)

    counts = [compiles(share) for share in shares]
    assert sum(counts) == compiles(whole) > 1 and abs(counts[0] - counts[1]) <= 1, counts


def torch_sees_a_gpu() -> bool:
    import torch

    return torch.cuda.is_available()


@pytest.mark.parametrize("given", ["3/2", "0/2", "1", "a/b"])
def test_a_shard_that_is_not_k_of_n_is_one_clear_message(pytester, suite_file, given):
    folder = pytester.path / "hw"
    folder.mkdir()
    (folder / "homework.py").write_text(SOLUTION)
    result = pytester.runpytest_inprocess(
        f"--homework={folder}", suite_file(TESTS[0]), "--collect-only", f"--homework-shard={given}"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()[-1500:]
    said = [line for line in result.stderr.lines if line.strip()]
    assert said == [f"ERROR: --homework-shard {given}: give K/N with 1 <= K <= N, as 1/2"], result.stderr.str()


def test_the_shares_caches_and_ungradable_lists_are_joined(tmp_path, monkeypatch):
    """Each share's cache files (content-addressed: the same name holds the same bytes) land in the
    template once, and a test either share's run failed is ungradable for every submission."""
    from stackcheck.paths import data

    monkeypatch.setattr(data, "cache_dir", lambda: tmp_path / "home")
    dealt = []

    def share(setup, parts, folder, shard, shards):
        dealt.append((shard, shards))
        cache = folder / "cache"
        (cache / "inductor" / "fx").mkdir(parents=True)
        (cache / "inductor" / "fx" / f"only-{shard}").write_text(str(shard))
        (cache / "inductor" / "fx" / "both").write_text("same")
        return cache, {f"tests_math/test_a.py::test_{shard}": "failed"}

    monkeypatch.setattr(grader, "_warm_shard", share)
    setup = grader.Setup(grader.suite_root(), ["math"], [], 60.0, {}, "visible", True, ())
    made = grader.warm_caches(setup, ["math"], tmp_path / "scratch", shards=2)
    assert sorted(dealt) == [(1, 2), (2, 2)]
    files = sorted(p.name for p in (made / "inductor" / "fx").iterdir())
    assert files == ["both", "only-1", "only-2"]
    listed = json.loads((made / grader.UNGRADABLE).read_text())
    assert listed == {"tests_math/test_a.py::test_1": "failed", "tests_math/test_a.py::test_2": "failed"}
    assert grader.warm_caches(setup, ["math"], tmp_path / "scratch2", shards=2) == made and len(dealt) == 2
