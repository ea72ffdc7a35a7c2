"""cpu_time.py FILE CMD [ARG...] - runs CMD with this process's stdin,
stdout and stderr, then writes to FILE the CPU time (user plus system, in
whole milliseconds) that CMD and the processes it waited for used, and
exits with CMD's status (128+N when signal N ended it).

For the shell tests' bounds on work (tests/c/abi/check.sh,
tests/c/abi/check_libnccom.sh): on a machine busy with other work a
command takes longer by the wall clock, but not more CPU, so a bound on
its CPU time fails only when the command itself does more (issue 32).
"""

import resource
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        print("usage: cpu_time.py FILE CMD [ARG...]", file=sys.stderr)
        return 2
    # What this process's children used before: exec keeps the count, and
    # python3 can be a wrapper (pyenv's shim) whose own commands are in it.
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        status = subprocess.run(sys.argv[2:], check=False).returncode
    except OSError as e:
        print(f"cpu_time.py: {sys.argv[2]}: {e}", file=sys.stderr)
        return 127
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    with open(sys.argv[1], "w") as f:
        f.write(f"{round(used * 1000)}\n")
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main())
