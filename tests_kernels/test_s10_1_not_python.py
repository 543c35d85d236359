"""§10.1: "Python처럼 보인다는 이유만으로 기존의 임의의 Python 코드 전체가 그대로 고성능 GPU 프로그램이 되는
것도 아니다." A function body that is valid Python, where a variable changes type, is a compile error
for `mojo build`; the same body with one type builds, and the program prints what Python prints."""

import subprocess
import sys

import pytest

from stackcheck import judges
from stackcheck.paths.tools import mojo_executable

pytestmark = pytest.mark.mojo

DYNAMIC = 'x = 1\nx = "now a string"\nprint(x)\n'  # Python: a name may hold any type
TYPED = "x = 1\nx = 2\nprint(x)\n"


def as_mojo(body: str) -> str:
    return "def main():\n    var " + "    ".join(line + "\n" for line in body.splitlines())


def build(tmp_path, name: str, body: str) -> tuple[int, str]:
    source = tmp_path / f"{name}.mojo"
    source.write_text(as_mojo(body))
    done = subprocess.run(
        [mojo_executable(), "build", "-o", str(tmp_path / name), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.returncode, done.stdout + done.stderr


@pytest.mark.claim("S10.1-not-python")
def test_python_that_changes_a_type_is_no_mojo_program(tmp_path, evidence):
    python = subprocess.run([sys.executable, "-c", DYNAMIC], capture_output=True, text=True, timeout=60)
    dynamic, typed = build(tmp_path, "dynamic", DYNAMIC), build(tmp_path, "typed", TYPED)
    evidence(python=python.stdout.strip(), dynamic_exit=dynamic[0], typed_exit=typed[0])
    judges.assert_python_is_not_mojo(python.stdout, dynamic, typed)
    ran = subprocess.run([str(tmp_path / "typed")], capture_output=True, text=True, timeout=60)
    python_typed = subprocess.run([sys.executable, "-c", TYPED], capture_output=True, text=True, timeout=60)
    assert ran.stdout.split() == python_typed.stdout.split() == ["2"], (ran.stdout, python_typed.stdout)
