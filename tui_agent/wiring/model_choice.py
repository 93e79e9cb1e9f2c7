"""The model of a running app and how the person chose it: ``/model`` (a name that
outlives a config reload), ``/think`` (a reasoning level that outlives ``/model``), the
choices the picker offers, and what litellm says a model can do.

Every model is made from :meth:`Settings.model_for
<tui_agent.config.loader.Settings.model_for>`, the one resolution of ``[model]``,
``[models."NAME"]`` and the command line's flags, so ``/model X`` gets exactly the
settings ``--model X`` would. :class:`~tui_agent.wiring.runtime.Runtime` holds one.
"""

from __future__ import annotations

from collections.abc import Callable

from tui_agent.config import ModelSettings, Settings
from tui_agent.core.llm import ChatModel
from tui_agent.wiring import build


class ModelChoice:
    """What the person chose in the app, over what the settings say."""

    def __init__(self, settings: Callable[[], Settings], *, demo: bool = False) -> None:
        self._settings = settings
        self.demo = demo
        self.chosen: str | None = None
        """A model picked with ``/model``: a reloaded config does not override it."""
        self.reasoning_effort: str | None = None
        """A level picked with ``/think``; None: each model's own setting."""
        self.api_bases: dict[str, str] = {}
        """Servers given with ``/model NAME URL``, by model: over its settings' ``api_base``
        for the rest of the run."""

    def name(self) -> str | None:
        """The model to use: the one picked, else the settings' own."""
        return self.chosen or self._settings().config.model.name

    def settings_for(self, name: str | None) -> ModelSettings:
        """The settings ``name`` (None: :meth:`name`) is used with. Raises
        ``ConfigError`` when its ``[models]`` table cannot be used."""
        chosen = name or self.name()
        model = self._settings().model_for(chosen)
        if self.reasoning_effort is not None:
            model = model.model_copy(update={"reasoning_effort": self.reasoning_effort})
        if chosen in self.api_bases:
            model = model.model_copy(update={"api_base": self.api_bases[chosen]})
        return model

    def make(self, name: str | None = None) -> ChatModel:
        """The chat model for ``name`` (None: :meth:`name`); raises as
        :meth:`settings_for`."""
        return build.chat_model(self.settings_for(name), demo=self.demo)

    def choices(self) -> list[str]:
        """What the picker offers: ``[model] name``, its ``choices``, then the models
        that have a ``[models]`` table (and, in the demo, the scripted model first)."""
        settings = self._settings()
        configured = settings.configured or settings.config.model
        seen = [n for n in (settings.config.model.name, configured.name, *configured.choices,
                            *settings.config.models) if n]
        if self.demo:
            from tui_agent.demo import DEMO_MODEL

            seen.insert(0, DEMO_MODEL)
        return list(dict.fromkeys(seen))
