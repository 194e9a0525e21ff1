"""Every embedding provider clawmem knows, one entry each: its name, the class that implements
it, where its API key is found, its defaults and whether it has a batch API.

Adding a provider is one module (a `Provider` subclass, see embeddings/remote.py) plus one
entry here; config validation, the provider plan, `status` and the batch check read this list.
It is plain data (nothing is imported until a provider is built), so the config can use it.
"""

from __future__ import annotations


class ProviderSpec:
    """One provider's entry. A plain class, not a NamedTuple: building a NamedTuple class costs
    about a millisecond, paid by every `clawmem` command (the config reads this list)."""

    __slots__ = ("name", "implementation", "env_vars", "openclaw_id", "default_model", "default_base",
                 "model_prefixes", "auto", "batch", "needs_key")

    def __init__(self, name: str, implementation: str, env_vars: tuple[str, ...] = (), openclaw_id: str = "",
                 default_model: str = "", default_base: str = "", model_prefixes: tuple[str, ...] = (), *,
                 auto: bool = True, batch: str = "", needs_key: bool = True):
        self.name = name
        self.implementation = implementation  # "module:Class" under clawmem.engine.embeddings, loaded when first built
        self.env_vars = env_vars  # where OpenClaw reads its key from, in its order
        self.openclaw_id = openclaw_id  # its id under openclaw.json models.providers
        self.default_model = default_model
        self.default_base = default_base  # the API's base URL
        self.model_prefixes = model_prefixes  # "openai/text-embedding-3-small" means the bare model
        self.auto = auto  # tried by provider = "auto" (in this list's order); else only when named
        self.batch = batch  # "module:Class" of its batch-API client, if it has one
        self.needs_key = needs_key


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
