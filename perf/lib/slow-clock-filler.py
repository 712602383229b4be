"""The emulated plan's busy filler (perf/lib/emulation.ts): keeps the workload's CPU busy while the
emulation's cgroup is throttled, so that a slowed burst looks to the CPU's counters as it would
under a slow clock (one longer busy period), not as stop-and-go (1 ms slices with idle between).

    python3 slow-clock-filler.py <fifo> <tasks file of the cgroup>

Runs as SCHED_IDLE, on the CPU it was started on (the workload's). It sleeps in a read of the FIFO;
the plan's controller writes a byte to it when the group used CPU while its quota is low. Woken,
it spins while any task of the group is runnable (a throttled task is runnable, not asleep) and
yields at every turn, so that the group runs the moment its quota is refilled: an unthrottled group
does not preempt a running task (the kernel reschedules at unthrottle only an idle CPU). Prints
`ready` once it waits. Python's os module has sched_yield and SCHED_IDLE; Node.js has neither.
"""
import os
import sys

fifo, tasks = sys.argv[1], sys.argv[2]
os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
fd = os.open(fifo, os.O_RDWR)


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
    os.read(fd, 4096)
    while runnable():
        for _ in range(50):
            os.sched_yield()
