"""What to do about the errors a sweep's episodes ended with.

Most errors an episode ends with pass (a server that was down, timeouts past every retry):
running the episodes again (``--retry-errors``) is the fix. A 400, 401, 403 or 404, an
unset key variable or an exhausted quota comes back on every retry: the hint names what to
fix first, so nobody pays for a rerun that fails the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["fix_for", "fixes"]

_STATUS = re.compile(r"\bHTTP (\d{3})\b")

_FIXES = {
    400: "the server refused the request as malformed: check the endpoint's request options "
         "(max_tokens, max_tokens_field, tool_choice, extra_body) against what it accepts",
    401: "the server refused the key: check the key in the endpoint's api_key_env variable",
    403: "the key may not use this model: check the key's permissions and the model name",
    404: "the server knows no such model or path: check the endpoint's model name and base_url",
}
_CONTEXT = ("the conversation outgrew the model's context: a model with a longer context, or "
            "a smaller max_tokens")
_KEY_UNSET = "set the key's environment variable (the endpoint's api_key_env)"
_QUOTA = "the account is out of credit (insufficient_quota): top it up or use another key"
_SCRIPTED_FIELD = ("the reference server's scripted models need the `sweepbench` request "
                   "field, sent only when the endpoint's name or the model it sends starts "
                   "with scripted/: send the model as scripted/NAME (e.g. "
                   "vllm/scripted/oracle, or model = \"scripted/oracle\" in the config)")


def fix_for(reason: str) -> str | None:
    """What to fix before an episode that ended with ``reason`` can pass, or None: running it
    again may be enough."""
    if "environment variable" in reason and "is not set" in reason:
        return _KEY_UNSET
    if "insufficient_quota" in reason:
        return _QUOTA
    if "scripted models need the `sweepbench` request field" in reason:
        return _SCRIPTED_FIELD
    match = _STATUS.search(reason)
    if match is None:
        return None
    # here, not at the top: the client package brings aiohttp, which commands over stored
    # results (report, export) never use
    from sweepbench.client.shapes import is_context_overflow

    status = int(match.group(1))
    if is_context_overflow(status, reason):
        return _CONTEXT
    return _FIXES.get(status)


def fixes(reasons: Iterable[str]) -> list[str]:
    """The fixes ``reasons`` need, each once, in the order first needed."""
    return list(dict.fromkeys(f for f in map(fix_for, reasons) if f is not None))
