"""The model client: one facade per endpoint over small modules, each one concern.

- ``facade``: :class:`ModelClient` (``complete``) and :class:`Conversation`;
- ``results``: what a call returns (:class:`CallResult`, :class:`AttemptFailure`);
- ``classify``: what an answer means (status and body -> error, Retry-After, scrubbing);
- ``retry``: when to retry and how long to wait; ``limits``: what an endpoint shares;
- ``stalls``: the first-byte budget and its watchdog; ``hedging``: copies of slow requests;
- ``transports/``: the HTTP seam (:class:`Transport`) and its implementations;
- ``body``, ``shapes``, ``cache``, ``secrets``, ``lending``: request bytes, reply shapes, the
  response cache, API keys, and the sweep's sleep-lender.
"""

from sweepbench.client.facade import Conversation, ModelClient, limits_key
from sweepbench.client.results import AttemptFailure, CallResult
from sweepbench.client.transports.base import Transport

__all__ = ["AttemptFailure", "CallResult", "Conversation", "ModelClient", "Transport",
           "limits_key"]
