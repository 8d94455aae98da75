"""Building one registered policy imports only its module (issue 18: start-up cost), and the
name -> module map that makes it so agrees with the registry."""

import subprocess
import sys

from asrpt.policies import POLICIES, _module_of, policy_names


def test_every_registered_name_maps_to_the_module_that_registers_it():
    names = policy_names()
    assert len(names) > 30
    for name in names:
        target = POLICIES.entry(name).target
        assert _module_of(name) is not None, name
        assert target.__module__ == f"asrpt.policies.{_module_of(name)}", name


def test_making_fifo_loads_no_other_policy_module_and_an_unknown_name_still_gets_its_hint():
    code = ("import sys\n"
            "from asrpt.policies import make_policy\n"
            "make_policy('fifo')\n"
            "print(sorted(m for m in sys.modules if m.startswith('asrpt.policies.')))\n"
            "try:\n"
            "    make_policy('srfs')\n"
            "except Exception as exc:\n"
            "    print(type(exc).__name__, exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded, error = out.splitlines()[:2]
    assert "asrpt.policies.fifo" in loaded
    assert "asrpt.policies.asrpt" not in loaded and "asrpt.policies.tiresias" not in loaded
    assert error.startswith("InvalidParameterError") and "srsf" in error
