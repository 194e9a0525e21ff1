"""A provider added by following ARCHITECTURE.md's "add an embedding provider" recipe literally:
this module (a Provider subclass declaring its class facts) plus one registry entry, made by
tests/test_provider_recipe.py. It speaks OpenAI's embeddings API, so the tests' own server answers it."""

from clawmem.engine.embeddings.remote import OpenAIProvider


class EchoProvider(OpenAIProvider):
    name = "echo"
    env_vars = ("ECHO_API_KEY",)
    openclaw_id = "echo"
    default_model = "echo-embed-1"
    default_base = "http://127.0.0.1:9/v1"  # overridden by remote.baseUrl in the test
    model_prefixes = ("echo/",)
    batch_client = ""
    auto = False
    config_keys = "`model`, `remote.*`"
    request = "as openai"
