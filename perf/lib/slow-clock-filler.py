"""The emulated plan's busy filler (perf/lib/emulation.ts): keeps the workload's CPU busy while the
emulation's cgroup is throttled, so that a slowed burst looks to the CPU's counters as it would
under a slow clock (one longer busy period), not as stop-and-go (1 ms slices with idle between).

    python3 slow-clock-filler.py <cgroup.procs of its filling group> <cgroup.procs of its resting group> <tasks file of the emulation's cgroup>

Runs as SCHED_IDLE (everything else comes first), on the CPU it was started on (the workload's),
and always runnable: it fills in a cgroup without a quota and rests in one whose quota (1 ms a
second) it has used up. It never sleeps of its own accord: a slow clock has no process of its own,
the slowed time is the work's, and a process that slept once per slowed burst would count as one
more burst of work each time (the product counts a process's voluntary sleeps). Moved into the
resting group it is held back by the quota (an involuntary switch); the plan's controller moves it
into the filling group when the emulation's group was held back while its quota is low. Filling, it
spins while any task of the group is runnable (a throttled task is runnable, not asleep) and yields
at every turn, so that the group runs the moment its quota is refilled (an unthrottled group does
not preempt a running task: the kernel reschedules at unthrottle only an idle CPU); once nothing
is, it moves itself back to rest. Python's os module has sched_yield and SCHED_IDLE; Node.js has
neither. Prints `ready` once resting.
"""
import os
import sys

filling, rest, tasks = sys.argv[1], sys.argv[2], sys.argv[3]
os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
me = str(os.getpid())


def move(procs):
    with open(procs, "w") as f:
        f.write(me)


move(rest)


def runnable():
    try:
        with open(tasks) as f:
            tids = f.read().split()
    except OSError:
        return False
    for tid in tids:
        try:
            with open(f"/proc/{tid}/stat") as f:
                s = f.read()
        except OSError:
            continue
        if s[s.rindex(")") + 2] == "R":
            return True
    return False


print("ready", flush=True)
while True:
    if runnable():
        for _ in range(50):
            os.sched_yield()
    else:
        move(rest)
