"""Field validation with upstream's texts, for the records the tools build from model values.

Upstream builds its records with pydantic, so a value the model sent that a field cannot take
(``product_cnts=[1.5]``, a number for a note) ends the call with pydantic's message, which the
model reads. These helpers accept what pydantic's lax mode accepts for the few field types the
tools fill from arguments, and otherwise raise :class:`FieldError` with that message.
"""

from __future__ import annotations

import math
from typing import Any

_DOCS = "https://errors.pydantic.dev/2.14/v/"


class FieldError(ValueError):
    """A record field refused a value; ``str()`` is pydantic's one-error report."""

    def __init__(self, model: str, field: str, kind: str, text: str, value: Any) -> None:
        super().__init__(
            f"1 validation error for {model}\n{field}\n  {text} [type={kind}, "
            f"input_value={value!r}, input_type={type(value).__name__}]\n"
            f"    For further information visit {_DOCS}{kind}")


def as_int(value: Any, model: str, field: str, *, optional: bool = False) -> int | None:
    """An ``int`` (``Optional[int]`` when ``optional``) field."""
    if value is None and optional:
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise FieldError(model, field, "finite_number", "Input should be a finite number", value)
        if value != int(value):
            raise FieldError(model, field, "int_from_float", "Input should be a valid integer, got "
                             "a number with a fractional part", value)
        if abs(value) >= 2 ** 63:
            raise FieldError(model, field, "int_parsing_size", "Unable to parse input string as an "
                             "integer, exceeded maximum size", value)
        return int(value)
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = math.nan
        if math.isfinite(number) and number == int(number):
            return int(number)
        raise FieldError(model, field, "int_parsing", "Input should be a valid integer, unable to "
                         "parse string as an integer", value)
    raise FieldError(model, field, "int_type", "Input should be a valid integer", value)


def as_str(value: Any, model: str, field: str, *, optional: bool = False) -> str | None:
    """A ``str`` (``Optional[str]`` when ``optional``) field: pydantic never turns numbers into text."""
    if isinstance(value, str) or (value is None and optional):
        return value
    raise FieldError(model, field, "string_type", "Input should be a valid string", value)
