"""Every embedding provider clawmem knows, one entry each: its name, the class that implements
it, where its API key is found, its defaults and whether it has a batch API.

Adding a provider is one module (a `Provider` subclass, see embeddings/remote.py) plus one
entry here; config validation, the provider plan, `status` and the batch check read this list.
It is plain data (nothing is imported until a provider is built), so the config can use it.
"""

from __future__ import annotations

from typing import NamedTuple


class ProviderSpec(NamedTuple):
    name: str
    implementation: str  # "module:Class" under clawmem.engine.embeddings, loaded when first built
    env_vars: tuple[str, ...] = ()  # where OpenClaw reads its key from, in its order
    openclaw_id: str = ""  # its id under openclaw.json models.providers
    default_model: str = ""
    default_base: str = ""  # the API's base URL
    model_prefixes: tuple[str, ...] = ()  # "openai/text-embedding-3-small" means the bare model
    auto: bool = True  # tried by provider = "auto" (in this list's order); else only when named
    batch: str = ""  # "module:Class" of its batch-API client, if it has one
    needs_key: bool = True


REGISTRY: tuple[ProviderSpec, ...] = (
    ProviderSpec("local", "local:LocalProvider"),
    ProviderSpec("openai", "remote:OpenAIProvider", ("OPENAI_API_KEY",), "openai", "text-embedding-3-small",
                 "https://api.openai.com/v1", ("openai/",), batch="batch:OpenAIBatch"),
    # Gemini's models live under "google" in openclaw.json
    ProviderSpec("gemini", "remote:GeminiProvider", ("GEMINI_API_KEY", "GOOGLE_API_KEY"), "google", "gemini-embedding-001",
                 "https://generativelanguage.googleapis.com/v1beta", ("models/", "gemini/", "google/"), batch="batch:GeminiBatch"),
    ProviderSpec("voyage", "remote:VoyageProvider", ("VOYAGE_API_KEY",), "voyage", "voyage-3-lite",
                 "https://api.voyageai.com/v1", ("voyage/",), batch="batch:VoyageBatch"),
    ProviderSpec("mistral", "remote:MistralProvider", ("MISTRAL_API_KEY",), "mistral", "mistral-embed",
                 "https://api.mistral.ai/v1", ("mistral/",)),
    ProviderSpec("ollama", "remote:OllamaProvider", ("OLLAMA_API_KEY",), "ollama", "nomic-embed-text",
                 "http://127.0.0.1:11434", ("ollama/",), auto=False, needs_key=False),
)

SPECS = {spec.name: spec for spec in REGISTRY}
NAMES = tuple(SPECS)
REMOTE = tuple(name for name in NAMES if name != "local")
BATCH = tuple(spec.name for spec in REGISTRY if spec.batch)
AUTO_ORDER = tuple(spec.name for spec in REGISTRY if spec.auto)


def load(implementation: str):
    """The class an entry names, imported now."""
    import importlib

    module, _, attr = implementation.partition(":")
    return getattr(importlib.import_module(f"clawmem.engine.embeddings.{module}"), attr)
