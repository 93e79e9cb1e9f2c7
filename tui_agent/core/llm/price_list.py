"""Whether litellm's price list names a model, told without importing litellm.

``import litellm`` takes seconds; the status bar wants to say "cost unknown" for an
unlisted hosted model (``openai/some-new-model``) from the start, not ``$0.0000`` until
the first request has imported litellm and asked it. litellm ships its price list as a
JSON file inside its package (``model_prices_and_context_window_backup.json``, the one
it reads itself with ``LITELLM_LOCAL_MODEL_COST_MAP``, which :mod:`.loader` sets); the
package is found without importing it and the file searched as text for the model's
key, a few milliseconds (parsing its 3 MB would hold the GIL a quarter of a second).
The first request's answer from litellm itself (:func:`.usage.priced`) wins over this.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from pathlib import Path

PRICE_FILE = "model_prices_and_context_window_backup.json"


def listed_in_file(model: str) -> bool | None:
    """Whether litellm's bundled price list has a key for ``model`` or for its name
    without the provider prefix (as :func:`.usage.listed` asks litellm); None when the
    file cannot be read. Blocking (a file read): call it off the UI's event loop."""
    text = _price_text()
    if text is None:
        return None
    bare = model.split("/", 1)[-1]
    return any(re.search(re.escape(json.dumps(name)) + r"\s*:", text) is not None
               for name in {model, bare} if name)


@functools.cache
def _price_text() -> str | None:
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    places = spec.submodule_search_locations if spec is not None else None
    for place in places or ():
        try:
            return (Path(place) / PRICE_FILE).read_text(encoding="utf-8")
        except OSError:
            continue
    return None
