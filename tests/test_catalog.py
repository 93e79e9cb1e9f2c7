"""litellm's chat models as the model picker suggests them: the names tui-agent sends
(``provider/model``), only the providers one key reaches, those with a key set first,
and the variable to set for the others."""

from __future__ import annotations

from tui_agent.core.llm.catalog import HOSTED, chat_models


def test_each_name_is_one_tui_agent_can_send_and_the_keyed_providers_come_first() -> None:
    known = chat_models({"ANTHROPIC_API_KEY": "sk-ant-x"})
    names = [k.name for k in known]
    assert len(names) == len(set(names)) and len(names) > 100
    assert all(n.split("/", 1)[0] in HOSTED for n in names)
    assert not any(n.startswith(("gemini/gemini/", "openai/openai/")) for n in names)
    assert not any("bedrock" in n or "azure" in n or "vertex" in n for n in names)
    assert not any("ft:" in n or "audio" in n or "realtime" in n for n in names)
    keyed = [k.keyed for k in known]
    assert keyed == sorted(keyed, reverse=True) and keyed[0] and not keyed[-1]
    assert {k.name.split("/")[0] for k in known if k.keyed} == {"anthropic"}
    sonnet = next(k for k in known if k.name == "anthropic/claude-sonnet-4-5")
    assert sonnet.summary() == "200k window · $3/$15 per M · vision · reasons"
    # A model's alias comes before its dated versions.
    claude = [n for n in names if n.startswith("anthropic/claude-sonnet-4-5")]
    assert claude[0] == "anthropic/claude-sonnet-4-5", claude


def test_without_a_key_each_model_names_the_variable_to_set() -> None:
    known = {k.name: k for k in chat_models({})}
    assert not any(k.keyed for k in known.values())
    assert known["openai/gpt-4o"].summary().startswith("set OPENAI_API_KEY · 128k window")
    gemini = [n for n in known if n.startswith("gemini/")]
    assert gemini and known[gemini[0]].summary().startswith("set GEMINI_API_KEY · ")
