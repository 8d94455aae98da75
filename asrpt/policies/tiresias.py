"""Tiresias 2D-LAS: discretized least-attained-service in GPU-seconds, non-clairvoyant
(Gu et al., NSDI'19).

**Queues.** A job's attained service S_j is the GPU-seconds it has held so far
(``view.attained_service``: g_j times the seconds it held its GPUs, restarts included). With
thresholds T_1 < T_2 < ... < T_{K-1} there are K queues: a new job enters Q0 and is demoted from
Q_k to Q_{k+1} when S_j >= T_{k+1}. The default ``thresholds=(3250.0, 7200.0)`` (K = 3) is the
one of the original simulator (SymbioticLab/Tiresias ``simulator/jobs.py``: ``queue_limit =
[3250, 7200, 18000]`` with three queues, so 18000 is never used); Lucid's re-implementation uses
``(18000.0,)`` and Pollux's ``(57600.0,)`` (16 GPU-hours). Choose per trace and report it.

**Order.** Queues from high (Q0) to low; within a queue, running jobs first, then waiting ones,
each by arrival time, then job id (the original simulator moves pending jobs behind running ones
in each queue after every pass, which limits thrashing). The engine selects greedily in that
order, skipping jobs that do not fit (so allocation is greedy backfill) and preempts running jobs
left out.

**Exact demotions.** There is no fixed tick: after every decision the policy tells the engine
(:meth:`Tiresias.next_wake`) the first time a running job will cross its next threshold (or a
waiting job will be promoted), so every queue jump is applied at exactly the time it happens.
Integral float thresholds are used as ints, so runs on exact instances stay exact.

**Starvation control (PROMOTEKNOB).** With ``promote_knob = P > 0``, a job in a lower queue that
has been waiting at least P times its executed time is moved back to Q0 and its counters are
reset (its attained service counts from zero again). As in the original simulator
(``run_sim.py``, ``solve_starvation``), both counters run since the last reset: the executed
time, and the waiting time accumulated since the job first ran after that reset; a job that has
not run since its last reset is not promoted. ``promote_knob = 0`` (the default, as in the
original) disables it.

**Cost.** Without the knob, a waiting job's key does not move (its attained service is fixed
while it waits), so the waiting jobs stay in a sorted list across decisions
(:class:`~asrpt.policies._incremental.WaitingOrder`), updated only for the jobs that arrived,
started, stopped or completed. The running jobs' keys are kept sorted too (:class:`_RunningQueues`):
a running job's service grows at a known rate, so its queue changes only at a threshold crossing
known in advance (a heap; the queue is computed again, with the same formula, only within a
safety margin of it), and the next wake-up is read from the same heap. A decision costs
O(changes x log A + the prefix the engine reads), the running jobs ahead of every waiting one
handed over as they are. (Subclasses that change the keys, such as 2D-Gittins, re-key the R
running jobs at each decision: O(R log R) more; their queues and threshold crossings are those of
2D-LAS all the same, so the wake-ups still come from a heap of crossings kept across decisions.)
With the knob (promotions move waiting jobs) a decision re-keys all A active jobs, O(A log A).

**The published simulator's 2D-LAS (``tiresias-peer``).** Three options switch to the exact
rules of the Tiresias simulator (SymbioticLab/Tiresias ``simulator/run_sim.py``, ``dlas-gpu``),
which reproduce its decisions job for job (docs/peers.md):

- ``queue_order="list"``: each queue is a list in the order jobs entered it (arrivals and
  demoted or promoted jobs go to its end); after every pass the waiting jobs of each queue move
  behind the running ones, both groups keeping their order. (``"arrival"``, the default, orders
  each queue by running first, then arrival.)
- ``demotion="events"``: attained service is brought up to date, and jobs are demoted, only at
  events (arrivals, completions and the simulator's own "jump" times), at most one queue per
  event. The jump after an event at t is the earliest ``t + (L_q - executed) // g`` over running
  jobs (the peer subtracts seconds from GPU-seconds, so the jump lands at or after the true
  crossing), or the time a waiting job reaches its promotion; a jump that is not earlier than the
  next arrival or completion is dropped there and recomputed. (``"exact"``, the default, demotes
  at the exact crossing.)
- ``service="time"``: attained service is executed seconds, not GPU-seconds (the peer's
  ``dlas``).

With any of these (or ``gittins_sample``), the peer's counters are kept as it keeps them: the
executed seconds since arrival or the last promotion, and, for the starvation knob K
(``promote_knob``, the peer's ``dlas-gpu-K``), the time a job that has run has waited since;
a waiting job in a lower queue whose waiting time reaches ``int(executed x K)`` goes to the end
of Q0 with both counters zeroed. ``gittins_sample`` (the peer's ``dlas-gpu-gittins``) sorts each
queue, before it is scanned, by the Gittins index of the job's attained service (highest first,
ties to the earlier submit, then the list order), with the index table of
:func:`peer_gittins_table` built from a sample of durations; ``"tiresias"`` is the peer's own
1,001-job sample (``asrpt/data/tiresias-yarn-gput1000.csv``). Stable-sorting ties keep the
instance order of the jobs (the peer's file order; the Tiresias reader keeps it). The pass itself
is the engine's greedy GPU count in queue order, skipping jobs that do not fit (the peer counts
GPUs only: run these presets on a one-server cluster, e.g. ``1x512``, to reproduce it).
Presets: ``tiresias-peer`` (the peer's ``dlas-gpu``), ``dlas-gpu-K`` for K in 0.5, 1, 2, 4, 8,
10, 100, 1000, and ``dlas-gpu-gittins``.

Cost of the peer rules: with list order and neither the knob nor the Gittins sort (``tiresias-peer``,
its ``service="time"`` and ``demotion="exact"`` variants) the state is incremental
(:class:`_PeerLASIncremental`: O(changes x log) per event, plus the chosen jobs handed to the
engine); otherwise every event visits every active job, as the peer does.
"""

from __future__ import annotations

import bisect
import csv
import heapq
import os
from decimal import ROUND_HALF_UP, Decimal
from numbers import Real

from .._sorted import insort, remove_sorted
from .._validation import Interval, Options
from ..errors import InvalidParameterError
from ..sizes import exact_div, exact_mul
from ._incremental import MergedOrder, WaitingOrder
from ._running import SortedArrayRun, merged_chunks
from .base import Decision, Policy, register_policy

__all__ = ["Tiresias", "peer_gittins_table", "peer_gittins_index", "PEER_GITTINS_SAMPLE"]

#: The peer's duration sample (``simulator/yarn-gput1000.csv``), bundled with asrpt.
PEER_GITTINS_SAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                                   "tiresias-yarn-gput1000.csv")
_KNOBS = (0.5, 1, 2, 4, 8, 10, 100, 1000)

_DEFAULT_THRESHOLDS = (3250.0, 7200.0)


def _as_exact(x):
    """An integral float as an int (so exact instances stay exact); anything else unchanged."""
    return int(x) if isinstance(x, float) and x.is_integer() else x


def _reached(value, target) -> bool:
    """value >= target, with a relative tolerance of 1e-9 when floats are involved."""
    if isinstance(value, float) or isinstance(target, float):
        return value >= target - 1e-9 * max(1.0, abs(float(target)))
    return value >= target


def _round_half_away(x: float, digits: int) -> float:
    """Python 2's ``round``: the exact binary value rounded to ``digits`` decimals, halves away
    from zero."""
    return float(Decimal(x).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def peer_gittins_table(durations, delta: int = 3250) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """The Tiresias simulator's Gittins index table: ``(sorted samples, index per sample)``.

    For each sorted sample d[i] (n of them), with a = d[i] - 1: lo = first j with d[j] > a; hi =
    n - 1 if a + delta > d[n-1] - 1, else the first j with d[j] > a + delta; p = round((hi - lo)
    / (n - lo), 5); e = (sum(d[lo:hi]) + delta (n - hi)) // (n - lo); index = round(p 10^6 / e, 4),
    ``round`` halving away from zero as in Python 2.

    Examples
    --------
    >>> peer_gittins_table([10, 20, 40], delta=15)
    ((10, 20, 40), (44444.6667, 29411.7647, 0.0))
    """
    d = sorted(int(v) for v in durations)
    n = len(d)
    if not n or d[0] < 1:
        raise InvalidParameterError(f"the Gittins sample must be a non-empty list of positive durations, got "
                                    f"{len(d)} values (smallest {d[0] if d else None})")
    prefix = [0]
    for v in d:
        prefix.append(prefix[-1] + v)
    index = []
    for v in d:
        a = v - 1
        lo = bisect.bisect_right(d, a)
        hi = n - 1 if a + delta > d[-1] - 1 else bisect.bisect_right(d, a + delta)
        p = _round_half_away((hi - lo) * 1.0 / (n - lo), 5)
        e = (prefix[hi] - prefix[lo] + delta * (n - hi)) // (n - lo)
        index.append(_round_half_away(p * 1000000 / e, 4) if e else 0.0)
    return tuple(d), tuple(index)


def peer_gittins_index(table, attained) -> float:
    """The peer's index of a job with ``attained`` service: 0 beyond the largest sample, else the
    index of the first sample greater than ``attained``.

    >>> table = peer_gittins_table([10, 20, 40], delta=15)
    >>> peer_gittins_index(table, 0), peer_gittins_index(table, 10), peer_gittins_index(table, 40)
    (44444.6667, 29411.7647, 0.0)
    """
    d, index = table
    j = bisect.bisect_right(d, attained)
    return index[j] if j < len(d) else 0.0


def _load_sample(sample) -> list[int]:
    if isinstance(sample, str):
        path = PEER_GITTINS_SAMPLE if sample == "tiresias" else sample
        try:
            with open(path, newline="", encoding="utf-8") as fh:
                rows = list(csv.DictReader(fh))
            return [int(float(r["duration"])) for r in rows]
        except FileNotFoundError:
            raise InvalidParameterError(f"gittins_sample: {path}: no such file") from None
        except (OSError, KeyError, TypeError, ValueError, csv.Error) as exc:
            raise InvalidParameterError(f"gittins_sample: {path}: not a CSV with a numeric 'duration' column "
                                        f"({type(exc).__name__}: {exc})") from None
    try:
        return [int(v) for v in sample]
    except (TypeError, ValueError):
        raise InvalidParameterError(f"gittins_sample must be 'tiresias', a CSV path or a list of durations, "
                                    f"got {sample!r}") from None


class _PeerLAS:
    """The Tiresias simulator's dlas state (see the module docstring): queues as insertion-ordered
    dicts of job index -> entry, entries ``[view, q, executed, total, last_pending, running, rank]``."""

    __slots__ = ("limits", "list_order", "event_demotion", "gpu_time", "knob", "gittins", "queues",
                 "jobs", "prev", "jump", "order", "promotions")

    def __init__(self, limits, list_order, event_demotion, gpu_time, knob, gittins):
        self.limits = limits
        self.list_order = list_order
        self.event_demotion = event_demotion
        self.gpu_time = gpu_time
        self.knob = knob
        self.gittins = gittins
        self.queues = [{} for _ in range(len(limits) + 1)]
        self.jobs: dict[int, list] = {}   # runnable jobs, in arrival order
        self.prev = None
        self.jump = None
        self.order: list = []
        self.promotions = 0

    def service(self, e):
        return e[2] * e[0].gpus if self.gpu_time else e[2]

    def decide(self, view):
        """The jobs chosen at this event, in queue order (the engine's greedy pass over them
        selects them all and preempts the running jobs left out, as the peer's pass does)."""
        now = view.now
        if not view.arrived and not view.completed and now != self.jump:
            return self.order              # a wake-up the peer has no event for: nothing changes
        jobs, queues, limits, knob = self.jobs, self.queues, self.limits, self.knob
        last = len(limits)
        for c in view.completed:
            e = jobs.pop(c.job.index)
            del queues[e[1]][c.job.index]
        dt = 0 if self.prev is None else now - self.prev
        self.prev = now
        for jv in sorted(view.arrived, key=lambda j: j.index):
            jobs[jv.index] = [jv, 0, 0, 0, 0, False, 0.0]
            queues[0][jv.index] = None
        gittins = self.gittins
        for i, e in jobs.items():
            if e[5]:                                   # ran since the previous event
                if dt:
                    e[2] += dt
                    e[3] += dt
                q = e[1]
                while q < last and self.service(e) >= limits[q]:
                    del queues[q][i]
                    q += 1
                    queues[q][i] = None
                    if self.event_demotion:
                        break                          # at most one queue per event
                e[1] = q
            else:
                if e[2] > 0 and dt:
                    e[4] += dt
                if knob and e[1] > 0 and e[3] > 0 and e[2] > 0 and e[4] >= int(e[2] * knob):
                    del queues[e[1]][i]
                    e[1] = 0
                    e[2] = e[4] = 0
                    queues[0][i] = None
                    self.promotions += 1
            if gittins is not None:
                e[6] = peer_gittins_index(gittins, self.service(e))
        free = view.total_gpus
        order = []
        for k, queue in enumerate(queues):
            if not self.list_order:
                keys = sorted(queue, key=lambda i: (not jobs[i][5], i))
                queue = queues[k] = dict.fromkeys(keys)
            if gittins is not None:
                keys = sorted(queue, key=lambda i: (jobs[i][6], -jobs[i][0].arrival), reverse=True)
                queue = queues[k] = dict.fromkeys(keys)
            for i in queue:
                e = jobs[i]
                g = e[0].gpus
                if free >= g:
                    free -= g
                    e[5] = True
                    order.append(e[0])
                else:
                    e[5] = False
        if self.list_order:
            for k, queue in enumerate(queues):
                keys = [i for i in queue if jobs[i][5]]
                if len(keys) < len(queue):
                    keys += [i for i in queue if not jobs[i][5]]
                    queues[k] = dict.fromkeys(keys)
        self.order = order
        self.jump = self._next_jump(now)
        return order

    def _next_jump(self, now):
        limits, last, knob = self.limits, len(self.limits), self.knob
        jump = None
        for e in self.jobs.values():
            if e[5]:
                q = e[1]
                if q < last:
                    if not self.gpu_time:
                        t = now + limits[q] - e[2]
                    elif self.event_demotion:
                        t = now + (limits[q] - e[2]) // e[0].gpus
                    else:                              # the exact crossing
                        t = now + exact_div(limits[q] - e[2] * e[0].gpus, e[0].gpus)
                    if jump is None or t < jump:
                        jump = t
            elif knob and e[1] > 0 and e[3] and e[2] > 0:
                diff = int(e[2] * knob - e[4])
                if diff > 0 and (jump is None or now + diff < jump):
                    jump = now + diff
        return jump


class _PeerLASIncremental:
    """The same rules as :class:`_PeerLAS` without the starvation knob and the Gittins sort, with
    the work per event proportional to what changed (not to the active jobs):

    - each queue is ``run`` (its running jobs in list order, a dict index -> view) followed by
      ``wait`` (its waiting jobs, a SortedDict position -> index, so batches can be put in front
      or at the back) and ``tail`` (jobs that entered it at this event: arrivals, demotions);
    - a running job's executed seconds are ``base + (t - since)``; demotions come from a heap of
      the first integer time its service reaches its queue's limit, and the peer's jump from one
      heap per GPU count of ``C = L - base + since`` (the jump ``t + (L - executed) // g`` is
      ``t + (C - t) // g``, increasing in C); stale heap entries carry an old version;
    - the pass skips a queue's running jobs at once when they all still fit, and a queue's waiting
      jobs when the free GPUs are fewer than the smallest of them, and stops at 0 free GPUs.
    """

    __slots__ = ("limits", "event_demotion", "gpu_time", "run", "wait", "wait_gpus", "run_gpus", "tail",
                 "state", "cross", "jumps", "prev", "jump", "order", "promotions", "lo", "hi")

    def __init__(self, limits, event_demotion, gpu_time):
        from sortedcontainers import SortedDict

        K = len(limits) + 1
        self.limits = limits
        self.event_demotion = event_demotion
        self.gpu_time = gpu_time
        self.run = [{} for _ in range(K)]
        self.wait = [SortedDict() for _ in range(K)]
        self.wait_gpus = [{} for _ in range(K)]     # GPU count -> waiting jobs with it
        self.run_gpus = [0] * K
        self.tail = [[] for _ in range(K)]
        self.state: dict[int, list] = {}           # index -> [view, q, base, since or None, version]
        self.cross: list = []                      # (time service reaches L_q, index, version)
        self.jumps: dict = {}                      # g -> heap of (C, index, version)
        self.prev = None
        self.jump = None
        self.order: list = []
        self.promotions = 0
        self.lo = [0] * K                          # smallest and largest positions used in wait[k]
        self.hi = [0] * K

    def _limit_time(self, e, now):
        """Push the demotion and jump entries of running job e (queue q < last)."""
        import heapq

        jv, q, base, since, version = e
        L = self.limits[q]
        g = jv.gpus
        if not self.gpu_time:
            x = since - base + L
            heapq.heappush(self.cross, (x, jv.arrival, jv.index, version))
            heapq.heappush(self.jumps.setdefault(1, []), (x, jv.index, version))
        elif self.event_demotion:
            # due once executed x g >= L: at executed = L / g (exact where the data are)
            heapq.heappush(self.cross, (since - base + exact_div(L, g), jv.arrival, jv.index, version))
            heapq.heappush(self.jumps.setdefault(g, []), (L - base + since, jv.index, version))
        else:
            x = since + exact_div(L - base * g, g)
            heapq.heappush(self.cross, (x, jv.arrival, jv.index, version))
            heapq.heappush(self.jumps.setdefault(1, []), (x, jv.index, version))

    def _wait_add(self, k, i, g, front=False):
        if front:
            self.lo[k] -= 1
            pos = self.lo[k]
        else:
            self.hi[k] += 1
            pos = self.hi[k]
        self.wait[k][pos] = i
        wg = self.wait_gpus[k]
        wg[g] = wg.get(g, 0) + 1
        return pos

    def decide(self, view):
        import heapq

        now = view.now
        if not view.arrived and not view.completed and now != self.jump:
            return self.order
        state, run, tail, limits = self.state, self.run, self.tail, self.limits
        last = len(limits)
        for c in view.completed:
            i, g = c.job.index, c.job.gpus
            e = state.pop(i)
            q = e[1]
            if run[q].pop(i, None) is not None:
                self.run_gpus[q] -= g
            else:   # stopped here, but it ran on to its completion before its iteration boundary
                wk = self.wait[q]
                pos = next((p for p, j in wk.items() if j == i), None)
                if pos is not None:
                    del wk[pos]
                    self.wait_gpus[q][g] -= 1
                else:
                    tail[q].remove(i)
        for jv in sorted(view.arrived, key=lambda j: j.index):
            state[jv.index] = [jv, 0, 0, None, 0]
            tail[0].append(jv.index)
        # demotions of jobs that ran since the previous event, in arrival order
        cross = self.cross
        due = []
        while cross and cross[0][0] <= now:
            x, _, i, version = heapq.heappop(cross)
            e = state.get(i)
            if e is not None and e[4] == version:
                due.append(e)
        if due:
            due.sort(key=lambda e: (e[0].arrival, e[0].index))
            for e in due:
                jv, q = e[0], e[1]
                i, g = jv.index, jv.gpus
                del run[q][i]
                self.run_gpus[q] -= g
                executed = e[2] + (now - e[3])
                q += 1
                if not self.event_demotion:
                    service = executed * g if self.gpu_time else executed
                    while q < last and service >= limits[q]:
                        q += 1
                e[1] = q
                e[4] += 1
                tail[q].append(i)
        # the pass
        free = view.total_gpus
        moved = []                                  # running jobs that stay running in a new place
        for k in range(last + 1):
            rk, wk, wg = run[k], self.wait[k], self.wait_gpus[k]
            front = []
            if free >= self.run_gpus[k]:
                free -= self.run_gpus[k]
            else:
                for i, jv in list(rk.items()):
                    if free >= jv.gpus:
                        free -= jv.gpus
                    else:
                        front.append(i)
                for i in front:
                    g = state[i][0].gpus
                    del rk[i]
                    self.run_gpus[k] -= g
                    self._stop(state[i], now)
            if wk and free:
                smallest = min(g for g, n in wg.items() if n)
                if free >= smallest:
                    taken = []
                    for pos, i in wk.items():
                        g = state[i][0].gpus
                        if free >= g:
                            free -= g
                            taken.append(pos)
                            self._start(state[i], k, now)
                            if not free:
                                break
                    for pos in taken:
                        i = wk.pop(pos)
                        wg[state[i][0].gpus] -= 1
            rest = []
            for i in tail[k]:
                e = state[i]
                g = e[0].gpus
                running = e[3] is not None
                if free >= g:
                    free -= g
                    if running:
                        rk[i] = e[0]
                        self.run_gpus[k] += g
                        moved.append(e)
                    else:
                        self._start(e, k, now)
                else:
                    if running:
                        self._stop(e, now)
                    rest.append(i)
            tail[k] = []
            for i in reversed(front):
                self._wait_add(k, i, state[i][0].gpus, front=True)
            for i in rest:
                self._wait_add(k, i, state[i][0].gpus)
        for e in moved:                             # demoted and still running: new limit entries
            if e[1] < last:
                self._limit_time(e, now)
        order = []
        for rk in run:
            order.extend(rk.values())
        self.order = order
        self.prev = now
        self.jump = self._next_jump(now)
        return order

    def _start(self, e, k, now):
        jv = e[0]
        self.run[k][jv.index] = jv
        self.run_gpus[k] += jv.gpus
        e[3] = now
        e[4] += 1
        if k < len(self.limits):
            self._limit_time(e, now)

    def _stop(self, e, now):
        e[2] += now - e[3]
        e[3] = None
        e[4] += 1

    def _next_jump(self, now):
        import heapq

        state = self.state
        jump = None
        for g, heap in self.jumps.items():
            while heap:
                C, i, version = heap[0]
                e = state.get(i)
                if e is not None and e[4] == version:
                    break
                heapq.heappop(heap)
            if heap:
                if self.gpu_time and self.event_demotion:
                    # t + (L - executed) // g from the job's own numbers (the first C in the
                    # heap is the first jump; C - now itself would round, 4.1 - 2.1 < 2)
                    e = state[heap[0][1]]
                    t = now + (self.limits[e[1]] - (e[2] + (now - e[3]))) // g
                else:
                    t = heap[0][0]
                if jump is None or t < jump:
                    jump = t
        return jump


@register_policy("tiresias")
@register_policy("tiresias-peer", queue_order="list", demotion="events")
@register_policy("dlas-gpu-gittins", queue_order="list", demotion="events", gittins_sample="tiresias")
class Tiresias(Policy):
    """Tiresias 2D-LAS (discretized two-dimensional least attained service).

    Parameters
    ----------
    thresholds : sequence of float
        Attained-service thresholds T_1 < T_2 < ... in GPU-seconds (K = len + 1 queues). Default
        ``(3250.0, 7200.0)``, the original simulator's.
    promote_knob : float >= 0
        PROMOTEKNOB P: a demoted job waiting at least P times its executed time returns to Q0
        with its counters reset. 0 (default) disables promotion.
    queue_order : {"arrival", "list"}
        Order inside a queue: running first, then arrival (default); or the peer's list order.
    demotion : {"exact", "events"}
        Demote at the exact crossing (default), or at the peer's events (module docstring).
    service : {"gpu_time", "time"}
        Attained service in GPU-seconds (default) or executed seconds (the peer's ``dlas``).
    gittins_sample : None, "tiresias", str or sequence of int
        Sort each queue by the peer's Gittins index built from this duration sample ("tiresias":
        the peer's own; a path: a CSV with a ``duration`` column). None (default): no sort.

    Attributes
    ----------
    thresholds_ : tuple
        The thresholds in use (integral floats as ints).
    promotions_ : int
        Jobs moved back to Q0 by the PROMOTEKNOB rule.

    Examples
    --------
    A 4-GPU job that has held its GPUs for 1 s (4 GPU-s) is demoted below a newcomer:

    >>> from asrpt.instance import Cluster, Instance, Job
    >>> from asrpt.sim import simulate
    >>> inst = Instance(Cluster.homogeneous(1, 4), (Job("a", 0, 4, processing_time=3),
    ...                                             Job("b", 0, 4, processing_time=1)))
    >>> simulate(inst, Tiresias(thresholds=(4,))).completion_times
    {'a': 4, 'b': 2}
    """

    parameter_constraints = {
        "thresholds": [tuple, list],
        "promote_knob": [Interval(Real, 0, None, closed="left")],
        "queue_order": [Options(str, {"arrival", "list"})],
        "demotion": [Options(str, {"exact", "events"})],
        "service": [Options(str, {"gpu_time", "time"})],
        "gittins_sample": [None, str, list, tuple],
    }
    preemptive = True
    clairvoyant = False

    @property
    def work_conserving(self) -> bool:  # type: ignore[override]
        """2D-LAS lists every active job; under the peer's rules (list order, event demotion,
        executed-time service or a Gittins sample) the order lists only the jobs the peer selects
        by GPU count, so a job it leaves out may wait on GPUs that a listed gang job could not be
        placed on: not work-conserving."""
        return not self._peer_rules()

    def _peer_rules(self) -> bool:
        """Whether the peer's rules apply: any of its options set (read with defaults: subclasses
        such as TiresiasGittins may not have them)."""
        return (getattr(self, "queue_order", "arrival") != "arrival" or getattr(self, "demotion", "exact") != "exact"
                or getattr(self, "service", "gpu_time") != "gpu_time"
                or getattr(self, "gittins_sample", None) is not None)

    def __init__(self, *, thresholds=_DEFAULT_THRESHOLDS, promote_knob: float = 0.0,
                 queue_order: str = "arrival", demotion: str = "exact", service: str = "gpu_time",
                 gittins_sample=None):
        self.thresholds = thresholds
        self.promote_knob = promote_knob
        self.queue_order = queue_order
        self.demotion = demotion
        self.service = service
        self.gittins_sample = gittins_sample

    def _check_thresholds(self) -> tuple:
        th = tuple(self.thresholds)
        ok = all(isinstance(t, Real) and not isinstance(t, bool) and t == t and 0 < t < float("inf")
                 for t in th)
        if not th or not ok or any(b <= a for a, b in zip(th, th[1:])):
            raise InvalidParameterError(
                f"The 'thresholds' parameter of {type(self).__name__} must be a non-empty, strictly "
                f"increasing sequence of positive finite numbers. Got {self.thresholds!r} instead.")
        return tuple(_as_exact(t) for t in th)

    def _validate_params(self) -> None:
        super()._validate_params()
        self._check_thresholds()

    def reset(self, cluster, *, seed=None):
        super().reset(cluster, seed=seed)
        self.thresholds_ = self._check_thresholds()
        self.promotions_ = 0
        self._base: dict[int, object] = {}       # executed time at the last counter reset
        self._run_since: dict[int, object] = {}  # first run after the last reset (PROMOTEKNOB)
        self._prev_now = None
        self._state: dict[int, tuple] = {}      # index -> (queue, service, since reset, waiting); knob only
        self._waiting = WaitingOrder()          # waiting jobs by key (used without the knob)
        self._keys_version = None
        # the running jobs' keys kept across decisions, for the default keys without the knob
        cls = type(self)
        default = (cls._queue is Tiresias._queue and cls._within_queue_key is Tiresias._within_queue_key
                   and cls._keys_version_now is Tiresias._keys_version_now and cls._key is Tiresias._key)
        self._queues = _RunningQueues(self.thresholds_) if default and not self.promote_knob else None
        # (subclasses such as TiresiasGittins may not have the peer options: read them with defaults)
        order = getattr(self, "queue_order", "arrival")
        demotion = getattr(self, "demotion", "exact")
        service = getattr(self, "service", "gpu_time")
        sample = getattr(self, "gittins_sample", None)
        self._peer = self._make_peer(order, demotion, service, sample) if self._peer_rules() else None
        # the running jobs' next threshold crossings, kept across decisions for the wake-ups (knob
        # off, not the peer's rules): the running queues' where they are kept, else kept apart
        # (keys that move with the service, as 2D-Gittins's: its queues are 2D-LAS's all the same)
        self._crossings = self._queues
        if self._crossings is None and not self.promote_knob and self._peer is None:
            self._crossings = _RunningQueues(self.thresholds_, ordered=False)

    def _make_peer(self, order, demotion, service, sample):
        """The peer-rules state: incremental where it can be (list order, no knob, no Gittins)."""
        if order == "list" and not self.promote_knob and sample is None:
            return _PeerLASIncremental(self.thresholds_, demotion == "events", service == "gpu_time")
        table = None if sample is None else peer_gittins_table(_load_sample(sample))
        return _PeerLAS(self.thresholds_, order == "list", demotion == "events", service == "gpu_time",
                        self.promote_knob, table)

    # -- queues ---------------------------------------------------------------------------------
    def _queue(self, service) -> int:
        th = self.thresholds_
        if isinstance(service, float):
            service = service + 1e-9 * max(1.0, service)
        return bisect.bisect_right(th, service)

    def _within_queue_key(self, view, job, service, running: bool) -> tuple:
        """Order inside a queue: running jobs first, then by arrival, then id."""
        return (0 if running else 1, job.arrival, job.key)

    def _prepare(self, view) -> None:
        """Hook for subclasses, called at the start of each decision."""

    def _keys_version_now(self):
        """What the keys of waiting jobs depend on besides their own fixed service (a subclass
        whose within-queue key reads changing state returns a value that changes with it)."""
        return None

    def _key(self, view, job, running: bool) -> tuple:
        """A job's full key now (knob off: the service is all the job's executed time)."""
        service = exact_mul(job.gpus, view.executed_time(job))
        return (self._queue(service),) + self._within_queue_key(view, job, service, running)

    def _decide_incremental(self, view):
        """The knob-free decision: the same order as the full re-sort (module docstring, Cost)."""
        waiting = self._waiting
        waiting.note(view)
        version = self._keys_version_now()

        def key_of(job):
            return self._key(view, job, False)

        if version != self._keys_version:
            self._keys_version = version
            waiting.rebuild(view, key_of)
        else:
            waiting.sync(view, key_of)
        self._crossings.update(view)        # (the running queues themselves where kept)
        self._prev_now = view.now
        held = self._queues.held if self._queues is not None else self._running_entries(view)
        # (a run of arrays, as 2D-Gittins keys its running jobs, merges itself: merged_chunks)
        merge = merged_chunks if isinstance(held, SortedArrayRun) else None
        return MergedOrder(held, waiting.entries, waiting.views, merge=merge)

    def _running_entries(self, view):
        """The running jobs' entries ``((queue, *within-queue key), index)``, sorted (a list, or
        a :class:`~asrpt.policies._running.SortedArrayRun` in that order), keyed afresh (knob
        off, no running queues kept: a subclass whose within-queue key moves with the service;
        the wake-ups read the crossings kept apart)."""
        held = []
        for job, executed, stopping in view.running_executed():
            service = exact_mul(job.gpus, executed)
            held.append(((self._queue(service),) + self._within_queue_key(view, job, service, not stopping),
                         job.index))
        held.sort()
        return held

    def decide(self, view):
        if self._peer is not None:
            return Decision(self._peer.decide(view), backfill=True)
        self._prepare(view)
        if not self.promote_knob:
            return Decision(self._decide_incremental(view), backfill=True)
        now = view.now
        for c in view.completed:
            i = c.job.index
            self._base.pop(i, None)
            self._run_since.pop(i, None)
        knob = self.promote_knob
        base, run_since = self._base, self._run_since
        keys = {}
        state = {}
        for job in view.active():
            i = job.index
            executed = view.executed_time(job)
            since = executed - base.get(i, 0)
            service = exact_mul(job.gpus, since)
            q = self._queue(service)
            running = view.is_running(job)
            pending = None
            if knob and since > 0:
                rs = run_since.get(i)
                if rs is None:  # it first ran after its last reset at the previous decision
                    rs = run_since[i] = self._prev_now
                if q > 0:  # waiting time since it first ran after its last reset
                    pending = (now - rs) - since
                    if not running and _reached(pending, knob * since):
                        base[i] = executed
                        run_since.pop(i, None)
                        self.promotions_ += 1
                        since, service, q, pending = 0, 0, 0, None
            state[i] = (q, service, since, pending)
            keys[i] = (q,) + self._within_queue_key(view, job, service,
                                                    running and not view.is_stopping(job))
        self._prev_now = now
        self._state = state
        order = sorted(view.active(), key=lambda j: keys[j.index])
        return Decision(order, backfill=True)

    def next_wake(self, view):
        """The next queue jump after the decision was applied: the first threshold crossing of a
        running job (its service grows at g_j GPU-s per second from now, restarts included), or
        the first promotion of a job left waiting in a lower queue (its waiting time grows at 1
        per second). None if there is none. With the peer's rules: its next jump."""
        now = view.now
        if self._peer is not None:
            jump = self._peer.jump
            return jump if jump is not None and jump > now else None
        if not self.promote_knob:
            self._waiting.note(view)  # this view shows the decision's starts and stops (once)
        if self._crossings is not None:
            return self._crossings.next_crossing(view)
        # (with the knob: the decision state of every active job)
        state = self._state
        wake = None
        stopping = {j.index for j in view.stopping}
        for job in view.running:
            i = job.index
            if i in stopping:
                continue
            t = self._jump(view, job, state.get(i))
            if t is not None and t > now and (wake is None or t < wake):
                wake = t
        knob = self.promote_knob
        for job in view.waiting:
            _, _, since, pending = state[job.index]
            if pending is not None:
                t = now + (knob * since - pending)
                if t > now and (wake is None or t < wake):
                    wake = t
        return wake

    def _jump(self, view, job, entry):
        """When the running ``job`` reaches its queue's threshold (None in the last queue), from
        its decision state ``entry`` (None: started by this decision, keyed now)."""
        if entry is None:
            service = exact_mul(job.gpus, view.executed_time(job))
            q = self._queue(service)
        else:
            q, service = entry[0], entry[1]
        th = self.thresholds_
        if q >= len(th):
            return None
        left = th[q] - service
        return view.now + (left / job.gpus if type(left) is float else exact_div(left, job.gpus))

    def report(self) -> dict:
        if self._peer is not None:
            return {"promotions": self._peer.promotions}
        return {"promotions": self.promotions_}


class _RunningQueues:
    """The running jobs' 2D-LAS keys ``((queue, stopping, arrival, id key), index)``, sorted, kept
    across decisions (the knob-free default rules).

    A running job's attained service g_j x executed grows at g_j GPU-seconds per second, so its
    queue changes only when the service crosses the next threshold, at a time known in advance:
    each job's crossing sits in a heap, and at a decision only the jobs whose crossing is within
    a safety margin of ``now`` get their queue computed again, with the one formula of the full
    pass (:meth:`queue_of`), so the keys are the ones that pass gives. The same heap gives the
    next wake-up (:meth:`next_crossing`): the candidates within the margin of the earliest are
    computed exactly, as the full pass computes every running job. Jobs enter and leave with the
    view's deltas (started, stopped, completed) and the stopping set (a job preempted that runs
    on to its boundary is keyed behind the running ones of its queue, and back when kept).

    With ``ordered=False`` only the crossings are kept (a policy whose order is keyed apart, as
    2D-Gittins's): no sorted entries, and a job that starts or stops running on to its boundary
    keeps its entry (the flag is part of the order only)."""

    __slots__ = ("th", "held", "_entry", "_version", "_heap", "_flagged", "_views", "_ordered")

    def __init__(self, thresholds: tuple, ordered: bool = True):
        self.th = thresholds
        self._ordered = ordered
        self.held: list = []                   # sorted entries of the running jobs (asrpt._sorted)
        self._entry: dict[int, tuple] = {}     # index -> its entry in held
        self._version: dict[int, int] = {}     # index -> version of its heap entries
        self._heap: list = []                  # (crossing - margin, crossing, index, version)
        self._flagged: set = set()             # keyed as stopping
        self._views: dict = {}

    def queue_of(self, job, executed):
        """(queue, service) of a running job that has held its GPUs ``executed`` seconds: the
        formula of :meth:`Tiresias._decide_incremental` (floats get the 1e-9 tolerance)."""
        th = self.th
        if type(executed) is float:
            service = job.gpus * executed
            return bisect.bisect_right(th, service + 1e-9 * (service if service > 1.0 else 1.0)), service
        service = exact_mul(job.gpus, executed)
        probe = service + 1e-9 * max(1.0, service) if isinstance(service, float) else service
        return bisect.bisect_right(th, probe), service

    def _drop(self, i: int) -> None:
        entry = self._entry.pop(i, None)
        if entry is not None:
            if self._ordered:
                remove_sorted(self.held, entry)
            self._version[i] = self._version.get(i, 0) + 1
        self._flagged.discard(i)
        self._views.pop(i, None)

    def _key(self, view, job, stopping: bool) -> int:
        """Key ``job`` (running) at ``view.now``; note its next crossing. Returns its queue."""
        i = job.index
        q, service = self.queue_of(job, view.executed_time(job))
        entry = ((q, 1 if stopping else 0, job.arrival, job.key), i)
        self._entry[i] = entry
        if self._ordered:
            insort(self.held, entry)
        self._views[i] = job
        if stopping:
            self._flagged.add(i)
        version = self._version[i] = self._version.get(i, 0) + 1
        th = self.th
        if q < len(th):
            now = float(view.now)
            t = now + float(th[q] - service) / job.gpus
            margin = 1e-7 * (abs(t) + 1.0) + 1e-7 * (float(th[q]) + 1.0) / job.gpus
            heapq.heappush(self._heap, (t - margin, t, i, version))
        return q

    def sync(self, view) -> None:
        """Apply the view's deltas: jobs started, stopped or completed since the last call."""
        for c in view.completed:
            self._drop(c.job.index)
        for group in (view.stopped, view.started):
            for job in group:
                self._drop(job.index)
                if view.is_running(job):
                    self._key(view, job, view.is_stopping(job))

    def update(self, view) -> None:
        """Bring every key up to ``view.now``: deltas, stopping flags, queue crossings."""
        self.sync(view)
        stopping = {j.index for j in view.stopping} if view.stopping else set()
        if self._ordered and (stopping or self._flagged):
            for i in [i for i in self._flagged if i not in stopping] + [i for i in stopping if i not in self._flagged]:
                job = self._views.get(i)
                if job is not None:
                    self._drop(i)
                    self._key(view, job, i in stopping)
        now = view.now
        heap, versions, entry_of = self._heap, self._version, self._entry
        again = []
        while heap and heap[0][0] <= now:
            _, t, i, version = heapq.heappop(heap)
            if version != versions.get(i):
                continue
            job = self._views[i]
            q_was = entry_of[i][0][0]
            q, _ = self.queue_of(job, view.executed_time(job))
            if q != q_was:
                self._drop(i)
                self._key(view, job, i in stopping)
            else:
                again.append((_, t, i, version))
        for item in again:
            heapq.heappush(heap, item)

    def next_crossing(self, view):
        """The first time after ``view.now`` a running job (not stopping) crosses its next
        threshold, or None: :meth:`Tiresias.next_wake`'s formula on the candidates."""
        self.sync(view)
        now = view.now
        stopping = {j.index for j in view.stopping} if view.stopping else ()
        heap, versions, entry_of, th = self._heap, self._version, self._entry, self.th
        wake = None
        popped = []
        while heap:
            low = heap[0][0]
            if wake is not None and low >= wake:
                break
            item = heapq.heappop(heap)
            i = item[2]
            if item[3] != versions.get(i):
                continue
            popped.append(item)
            if i in stopping:
                continue
            job = self._views[i]
            q = entry_of[i][0][0]
            service = exact_mul(job.gpus, view.executed_time(job))
            left = th[q] - service
            t = now + (left / job.gpus if type(left) is float else exact_div(left, job.gpus))
            if t > now and (wake is None or t < wake):
                wake = t
        for item in popped:
            heapq.heappush(heap, item)
        return wake


for _k in _KNOBS:
    register_policy(f"dlas-gpu-{_k:g}", queue_order="list", demotion="events", promote_knob=_k)(Tiresias)
