"""JsonRequest: a request whose body is JSON (Scrapy's ``JsonRequest``)."""

from __future__ import annotations

import copy
import json
import warnings
from typing import Any, ClassVar, Self

from skitter.http._request import Request

__all__ = ["JsonRequest"]


_BOTH = "Both body and data passed. data will be ignored"


class JsonRequest(Request):
    """A Request with ``data=`` serialized as its JSON body by ``json.dumps`` with
    ``dumps_kwargs`` (``sort_keys=True`` unless they say otherwise), sent as POST
    unless ``method`` says otherwise. ``body=`` wins over ``data`` (with a warning).
    Content-Type and Accept default to JSON's, as a browser's XHR sends them."""

    __slots__ = ("dumps_kwargs",)

    attributes: ClassVar[tuple[str, ...]] = (*Request.attributes, "dumps_kwargs")

    def __init__(
        self, *args: Any, dumps_kwargs: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        dumps_kwargs = copy.deepcopy(dumps_kwargs) if dumps_kwargs is not None else {}
        dumps_kwargs.setdefault("sort_keys", True)
        self.dumps_kwargs = dumps_kwargs
        data = kwargs.pop("data", None)
        if data is not None:
            if kwargs.get("body") is not None:
                warnings.warn(_BOTH, stacklevel=2)
            else:
                kwargs["body"] = self._dumps(data)
                kwargs.setdefault("method", "POST")
        super().__init__(*args, **kwargs)
        self.headers.setdefault("Content-Type", "application/json")
        self.headers.setdefault("Accept", "application/json, text/javascript, */*; q=0.01")

    def replace(self, *, cls: type[Self] | None = None, **changes: Any) -> Self:
        """A copy with some arguments changed; ``data=`` gives it a new JSON body."""
        data = changes.pop("data", None)
        if data is not None:
            if changes.get("body") is not None:
                warnings.warn(_BOTH, stacklevel=2)
            else:
                changes["body"] = self._dumps(data)
        return super().replace(cls=cls, **changes)

    def _dumps(self, data: Any) -> str:
        return json.dumps(data, **self.dumps_kwargs)
