"""The sweep on a Ray cluster (``sweepbench run --workers N`` / ``--ray ADDRESS``).

One driver, many workers, one code path from one machine's cores to many machines:

    messages   what driver and workers say to each other (msgspec Structs)
    ledger     the driver's side of the endpoints' limits: the account's buckets and
               in-flight cap, leased to workers in batches, taken back from a dead one
    leased     the worker's side: limits whose buckets and cap are fed by leases
    sink       the worker's store: journal events and records forwarded to the driver
    worker     the Ray actor: the normal episode runner on its own event loop
    driver     the work list (longest first), batches handed out on request, the store
               (its only writer), re-queueing a dead worker's episodes
    cluster    starting or joining Ray; the one-line error when it is not installed

Nothing here is imported by the single-process sweep: without ``--workers`` or ``--ray``
``sweepbench run`` is what it was.
"""
