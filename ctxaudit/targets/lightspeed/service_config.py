"""The configuration files a lightspeed-stack tree runs under in the harness
(:mod:`.harness`): OGX's run configuration, with the fake LLM (:mod:`.fake_llm`) as its
only inference provider, and the service's own file, with the compaction settings of a
:class:`~ctxaudit.targets.lightspeed.harness.RunConfig`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ctxaudit.targets.lightspeed.fake_llm import MODEL_ID

if TYPE_CHECKING:
    from ctxaudit.targets.lightspeed.harness import RunConfig

PROVIDER_ID = "fake"
INSTRUCTIONS = "You are the ctxaudit test assistant."


def run_yaml(ogx_dir: Path, llm_url: str, package: str) -> str:
    """OGX's run configuration: the fake LLM as its only inference provider.

    ``package`` is ``ogx`` (OGX 1.x: a ``responses`` API, builtin provider) or
    ``llama_stack`` (Llama Stack 0.6: responses are part of ``agents``).
    """
    if package == "ogx":
        apis = "[inference, responses, conversations, files, tool_runtime, vector_io]"
        responses = """\
  responses:
  - provider_id: builtin
    provider_type: inline::builtin
    config:
      persistence:
        responses: {table_name: agents_responses, backend: sql_default}
"""
    else:
        apis = "[agents, inference, files, safety, tool_runtime, vector_io]"
        responses = """\
  safety: []
  agents:
  - provider_id: meta-reference
    provider_type: inline::meta-reference
    config:
      persistence:
        agent_state: {namespace: agents_state, backend: kv_default}
        responses: {table_name: agents_responses, backend: sql_default}
"""
    return f"""\
version: 2
distro_name: ctxaudit
image_name: ctxaudit
apis: {apis}
providers:
  inference:
  - provider_id: {PROVIDER_ID}
    provider_type: remote::openai
    config: {{api_key: not-used, base_url: "{llm_url}"}}
  files:
  - provider_id: localfs
    provider_type: inline::localfs
    config:
      metadata_store: {{table_name: files_metadata, backend: sql_default}}
      storage_dir: "{ogx_dir}/files"
  tool_runtime: []
  vector_io: []
{responses}storage:
  backends:
    kv_default: {{type: kv_sqlite, db_path: "{ogx_dir}/kv.db"}}
    sql_default: {{type: sql_sqlite, db_path: "{ogx_dir}/sql.db"}}
  stores:
    metadata: {{namespace: registry, backend: kv_default}}
    inference: {{table_name: inference_store, backend: sql_default}}
    conversations: {{table_name: openai_conversations, backend: sql_default}}
registered_resources:
  models:
  - {{model_id: {MODEL_ID}, provider_id: {PROVIDER_ID}, provider_model_id: {MODEL_ID}, \
model_type: llm}}
"""


def service_yaml(folder: Path, run_yaml: Path, config: RunConfig) -> str:
    """The service's configuration: OGX as its library client, the compaction settings
    of ``config``, storage in ``folder``."""
    return f"""\
name: ctxaudit-target
service: {{host: 127.0.0.1, port: 8080, auth_enabled: false, workers: 1, \
color_log: false, access_log: false}}
llama_stack:
  use_as_library_client: true
  library_client_config_path: "{run_yaml}"
user_data_collection: {{feedback_enabled: false, transcripts_enabled: false}}
authentication: {{module: noop}}
database:
  sqlite: {{db_path: "{folder}/lightspeed.db"}}
customization:
  system_prompt: "{INSTRUCTIONS}"
  agent_card_config: {{name: ctxaudit-target, description: ctxaudit, skills: [], security: []}}
inference:
  default_model: {MODEL_ID}
  default_provider: {PROVIDER_ID}
  context_windows: {{{PROVIDER_ID}/{MODEL_ID}: {config.window}}}
compaction:
  enabled: true
  threshold_ratio: {config.ratio}
  token_floor: {config.floor}
  buffer_turns: {config.buffer}
  buffer_max_ratio: {config.buffer_ratio}
"""
