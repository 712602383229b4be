"""The emulated plan's busy filler (perf/lib/emulation.ts): keeps the workload's CPU busy while the
emulation's cgroup is throttled, so that a slowed burst looks to the CPU's counters as it would
under a slow clock (one longer busy period), not as stop-and-go (1 ms slices with idle between).

    python3 slow-clock-filler.py <FIFO to the plan's controller> <file listing the emulation's tasks>

Runs as SCHED_IDLE (everything else comes first), on the CPU it was started on (the workload's),
and always runnable: it fills in a cgroup without a quota and rests in one whose quota (1 ms a
second) it has used up, moved between them by the plan's controller. It never sleeps of its own
accord: a slow clock has no process of its own, the slowed time is the work's, and a process that
slept once per slowed burst would count as one more burst of work each time (the product counts
a process's voluntary sleeps). Held back by the resting group's quota it stops involuntarily; it
writes no cgroup file itself (a move takes a lock a writer may sleep on: that was 2-3 voluntary
sleeps a second) and reads none (below). The controller moves it into the filling group when the
emulation's group used CPU or was held back while its quota is low. Filling, it spins while any task of the group is runnable
(a throttled task is runnable, not asleep) and yields at every turn, so that the group runs the
moment its quota is refilled (an unthrottled group does not preempt a running task: the kernel
reschedules at unthrottle only an idle CPU); once nothing is, it asks the controller, through the
FIFO (a write that never waits), to move it back to rest, and yields until it is. Python's os module
has sched_yield and SCHED_IDLE; Node.js has neither. Prints `ready` once started.
"""
import os
import sys
import time

fifo, tasks = sys.argv[1], sys.argv[2].encode()
os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
# Read and write: opening never waits for a reader, and a full FIFO is a request already made.
ask = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)


# The group's tasks as the plan's controller lists them (a file it replaces whole, on tmpfs), read
# again at most every REFRESH_S, and each task's stat file kept open and read again from its start.
# The filler opens no cgroup file: opening one takes the cgroup filesystem's lock for reading (its
# permission check; Python's open adds an fstat), which waits now and then, and a filler opening the
# group's tasks file thousands of times a second slept 1-3 times a second that way. A filler that
# sleeps at all, running most of the workload CPU's time under the slower ramp, is to the product
# the process of the longest bursts, whose few sleeps it then takes for the work's bursts (one
# restore run in three under the slower ramp read 1-3 bursts a second).
REFRESH_S = 0.05
stats = {}
listed_at = -1.0


# The process that started it (the emulation): once it is gone, so is the filler, which would
# otherwise spin on for good (a script killed, or exiting on a signal while its run went on to
# start the next plan). getppid never sleeps.
PARENT = os.getppid()


def refresh():
    global listed_at
    listed_at = time.monotonic()
    if os.getppid() != PARENT:
        sys.exit(0)
    try:
        fd = os.open(tasks, os.O_RDONLY)
        try:
            tids = set(os.read(fd, 1 << 16).split())
        finally:
            os.close(fd)
    except OSError:
        return
    for tid in [t for t in stats if t not in tids]:
        os.close(stats.pop(tid))
    for tid in tids - stats.keys():
        try:
            stats[tid] = os.open(b"/proc/" + tid + b"/stat", os.O_RDONLY)
        except OSError:
            pass


def runnable():
    if time.monotonic() - listed_at > REFRESH_S:
        refresh()
    for tid, fd in list(stats.items()):
        try:
            s = os.pread(fd, 512, 0)
        except OSError:
            # The task has gone: its stat file reads as an error from then on.
            os.close(stats.pop(tid))
            continue
        # The state follows the command's closing parenthesis (a command may hold one itself).
        end = s.rfind(b")")
        if end >= 0 and s[end + 2 : end + 3] == b"R":
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
