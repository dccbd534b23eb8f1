"""The readers' fuzz properties (`fuzz_readers.py`: the PDDL reader, the plan reader, the metadata
loader and the five source adapters on generated hostile input), run in one child process within
3 GiB of address space and a time limit: every input ends cleanly, and peak memory stays under
1 GiB. SAFEFORGE_FUZZ_EXAMPLES sets the examples per reader (default 25: about half a minute)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests_paths import REPO

FUZZ_MODULE = Path(__file__).with_name("fuzz_readers.py")
CHILD = (  # its peak memory is VmHWM, its own: ru_maxrss keeps the peak of the pytest process that started it
    "import atexit, resource, sys, pytest; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30)); "
    "atexit.register(lambda: print('maxrss', next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')))); "
    "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', sys.argv[1]]))"
)


def test_every_reader_ends_cleanly_on_hostile_input_within_bounded_memory():
    done = subprocess.run([sys.executable, "-c", CHILD, str(FUZZ_MODULE)], capture_output=True, text=True, timeout=900, cwd=REPO)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    peak_kib = int(done.stdout.rsplit("maxrss ", 1)[1])
    assert peak_kib < 1 << 20, f"peak memory {peak_kib >> 10} MiB"
