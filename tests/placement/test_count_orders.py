"""The count placers' server orders (placement/placers.py) against their definitions, written
out plainly: the faster forms (a C sort key, a least-idle-count probe) pick the same servers."""

from hypothesis import given, settings, strategies as st

from asrpt.placement.placers import count_allocation


def _reference(order, free, per, count):
    """count_allocation as defined: walk servers in the order, whole instances, all or nothing."""
    n = len(free)
    most_free = sorted(range(n), key=lambda h: (-free[h], h))
    if order == "spread":   # rounds over the servers, one instance per server with room each
        taken, left = [0] * n, count
        while left:
            progressed = False
            for h in most_free:
                if left and free[h] - taken[h] >= per:
                    taken[h] += per
                    left -= 1
                    progressed = True
            if not progressed:
                return None
        return tuple((h, g) for h, g in enumerate(taken) if g)
    if order == "first_fit":
        walk = list(range(n))
    elif order == "most_free":
        walk = most_free
    else:
        fits = [h for h in range(n) if free[h] >= per * count]
        walk = [min(fits, key=lambda h: (free[h], h))] if fits else most_free
    out, left = [], count
    for h in walk:
        k = min(free[h] // per, left)
        if k:
            out.append((h, k * per))
            left -= k
            if not left:
                break
    return None if left else tuple(sorted(out))


@settings(max_examples=400, deadline=None)
@given(free=st.lists(st.integers(0, 16), min_size=1, max_size=24),
       per=st.sampled_from([1, 1, 2, 4, 8]), count=st.integers(1, 12),
       order=st.sampled_from(["first_fit", "most_free", "best_fit", "spread"]))
def test_count_orders_match_their_definitions(free, per, count, order):
    assert count_allocation(order, free, per, count) == _reference(order, free, per, count)
    assert count_allocation(order, tuple(free), per, count) == _reference(order, free, per, count)


@settings(max_examples=200, deadline=None)
@given(free=st.lists(st.integers(0, 8), min_size=1, max_size=12), gpus=st.integers(1, 24),
       order=st.sampled_from(["first_fit", "most_free", "best_fit", "spread"]))
def test_reserve_gives_the_servers_of_allocate(free, gpus, order):
    """What the engine holds back for a blocked job (reserve, unpriced) is what allocate gives."""
    from asrpt.instance import Cluster, Instance, Job
    from asrpt.placement import make_placer
    from asrpt.state import job_views

    cluster = Cluster.homogeneous(max(len(free), 3), 8, "A100")
    free = free + [0] * (cluster.n_servers - len(free))
    view, = job_views(Instance(cluster, (Job("j", 0, gpus, processing_time=5),)))
    placer = make_placer(order)
    alloc = placer.allocate(view, free, cluster)
    assert placer.reserve(view, free, cluster) == (None if alloc is None else alloc.servers)
    assert super(type(placer), placer).reserve(view, free, cluster) == placer.reserve(view, free, cluster)


def test_spread_on_a_large_server_is_computed_in_closed_form():
    """spread takes one round per instance by its definition; on a 65,536-GPU server the
    closed form gives the same counts without walking the rounds."""
    assert count_allocation("spread", [65536], 1, 65536) == ((0, 65536),)
    assert count_allocation("spread", [65536, 3, 40000], 2, 30000) == ((0, 30000), (1, 2), (2, 29998))
    assert count_allocation("spread", [65536, 3, 40000], 2, 30000) == _reference("spread", [65536, 3, 40000], 2, 30000)
    assert count_allocation("spread", [65536, 65535], 4, 32768) is None
