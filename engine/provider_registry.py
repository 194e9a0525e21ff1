"""Every embedding provider clawmem knows, in the order `provider = "auto"` tries them.

An entry is a name and the class that implements it (`"module:Class"` under
clawmem.engine.embeddings); everything else about a provider (its key's environment
variables, default model, batch API, whether auto tries it) is declared on the class, a
`Provider` (embeddings/base.py). Classes load when first needed: the config reads only the
names here, so a keyword-only command never imports a provider's module.

Adding a provider is one module (a `Provider` subclass) plus one entry here.
"""

from __future__ import annotations

PROVIDERS: dict[str, str] = {
    "local": "local:LocalProvider",
    "openai": "remote:OpenAIProvider",
    "gemini": "remote:GeminiProvider",
    "voyage": "remote:VoyageProvider",
    "mistral": "remote:MistralProvider",
    "ollama": "remote:OllamaProvider",
}

NAMES = tuple(PROVIDERS)

# why a search is keyword-only under `provider = "none"`: here, so a search can say it without
# loading the embeddings package (Plan.keyword_reason gives the same words)
KEYWORD_BY_CHOICE = "provider = none (keyword-only by choice)"


def provider_class(name: str):
    """The class registered under `name`, imported now (KeyError for an unknown name)."""
    import importlib

    module, _, attr = PROVIDERS[name].partition(":")
    # a bare module name is one of clawmem.engine.embeddings; a dotted one is a full module path
    return getattr(importlib.import_module(module if "." in module else f"clawmem.engine.embeddings.{module}"), attr)


def provider_classes() -> list:
    """Every registered class, in the registry's order."""
    return [provider_class(name) for name in PROVIDERS]
