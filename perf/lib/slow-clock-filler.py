"""The emulated plan's busy filler (perf/lib/emulation.ts): keeps the workload's CPU busy while the
emulation's cgroup is throttled, so that a slowed burst looks to the CPU's counters as it would
under a slow clock (one longer busy period), not as stop-and-go (1 ms slices with idle between).

    python3 slow-clock-filler.py <FIFO to the plan's controller> <tasks file of the emulation's cgroup>

Runs as SCHED_IDLE (everything else comes first), on the CPU it was started on (the workload's),
and always runnable: it fills in a cgroup without a quota and rests in one whose quota (1 ms a
second) it has used up, moved between them by the plan's controller. It never sleeps of its own
accord: a slow clock has no process of its own, the slowed time is the work's, and a process that
slept once per slowed burst would count as one more burst of work each time (the product counts
a process's voluntary sleeps). Held back by the resting group's quota it stops involuntarily; it
writes no cgroup file itself (a move takes a lock a writer may sleep on: that was 2-3 voluntary
sleeps a second). The controller moves it into the filling group when the emulation's group used CPU
or was held back while its quota is low. Filling, it spins while any task of the group is runnable
(a throttled task is runnable, not asleep) and yields at every turn, so that the group runs the
moment its quota is refilled (an unthrottled group does not preempt a running task: the kernel
reschedules at unthrottle only an idle CPU); once nothing is, it asks the controller, through the
FIFO (a write that never waits), to move it back to rest, and yields until it is. Python's os module
has sched_yield and SCHED_IDLE; Node.js has neither. Prints `ready` once started.
"""
import os
import sys
import time

fifo, tasks = sys.argv[1], sys.argv[2]
os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
# Read and write: opening never waits for a reader, and a full FIFO is a request already made.
ask = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)


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
asked = 0.0
while True:
    if runnable():
        asked = 0.0
        for _ in range(50):
            os.sched_yield()
    elif time.monotonic() - asked > 0.001:
        # Asked again each millisecond: a move to fill may have crossed the last request.
        try:
            os.write(ask, b"r")
        except BlockingIOError:
            pass
        asked = time.monotonic()
    else:
        os.sched_yield()
