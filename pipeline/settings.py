"""`Settings`: every path, port, endpoint and default that Safeforge reads from the environment.

This module is the only place that reads environment variables (`Settings.load`). Each field
names its variable and documents its meaning; `safeforge config` prints the effective values and
where each came from, and the configuration page of the docs is generated from this model.
Relative paths are resolved against the working directory, so every command finds the same
`./outputs` wherever Safeforge is installed. Secrets are `SecretStr`: never printed or stored.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast, get_args

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo

from safeforge.common.errors import SafeforgeError
from safeforge.common.limits import DEFAULT_LIMITS, LIMIT_RANGES, InputLimits
from safeforge.common.ranges import ANY_PORT, PORT, SECONDS, TEMPERATURE, Range
from safeforge.common.resources import package_path
from safeforge.lexicon import WORDNET_ENV

LOOPBACK = "127.0.0.1"
STAGE_MODEL_PREFIX = "SAFEFORGE_MODEL_"  # SAFEFORGE_MODEL_EXTRACT=... sets the model of stage "extract"
RATE = Range(0, 10**12, whole=False, low_open=True, unit="per minute")
_ANALYTICS_OFF = {"PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1"}


class SettingsError(SafeforgeError):
    """An environment variable with a value Safeforge cannot use (names the variable)."""


def _env(name: str, *fallbacks: str) -> Any:
    """Field metadata: the environment variable (and fallbacks, read in order when it is unset)."""
    return {"env": name, "env_fallbacks": list(fallbacks)}


def _variables(field: FieldInfo) -> list[str]:
    """The environment variables of a setting: its own, then its fallbacks."""
    meta = field.json_schema_extra
    assert isinstance(meta, dict), "every setting names its variable with _env()"
    return [str(meta["env"]), *(str(v) for v in cast(list, meta["env_fallbacks"]))]


def _limit(name: str) -> Any:
    """The field of input limit `name` (`SAFEFORGE_MAX_<NAME>`), in its range."""
    return LIMIT_RANGES[name].field(getattr(DEFAULT_LIMITS, name), json_schema_extra=_env(InputLimits.variable(name)))


def _data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "safeforge"


class Settings(BaseModel):
    """Safeforge's settings; `Settings.load()` reads them from the environment."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True, validate_default=True)

    # -- folders --------------------------------------------------------------------------------
    outputs: Path = Field(Path("outputs"), json_schema_extra=_env("SAFEFORGE_OUTPUTS"))
    """Where runs are written, one folder per run (also releases, evaluations, the review server's data)."""
    data_dir: Path = Field(default_factory=_data_home, json_schema_extra=_env("SAFEFORGE_DATA"))
    """Where `safeforge sources fetch` keeps the full datasets (default `$XDG_DATA_HOME/safeforge`)."""
    state_dir: Path = Field(Path(".safeforge"), json_schema_extra=_env("SAFEFORGE_STATE_DIR"))
    """Pid files and logs of the local services started by `safeforge services start`."""
    prompts_dir: Path | None = Field(None, json_schema_extra=_env("SAFEFORGE_PROMPTS"))
    """A folder of prompt templates to use instead of the bundled ones."""
    wordnet: Path | None = Field(None, json_schema_extra=_env(WORDNET_ENV))
    """A folder of WordNet 3.0 database files (data.noun, ...) for the generation rules; unset: /usr/share/wordnet."""
    # -- LLM ------------------------------------------------------------------------------------
    openai_base_url: str | None = Field(None, json_schema_extra=_env("OPENAI_BASE_URL"))
    """The OpenAI-compatible endpoint of every LLM stage (unset: https://api.openai.com/v1)."""
    openai_api_key: SecretStr | None = Field(None, json_schema_extra=_env("OPENAI_API_KEY"))
    """The endpoint's API key; local servers may leave it unset."""
    model: str = Field("gpt-4o-mini", json_schema_extra=_env("SAFEFORGE_MODEL"))
    """The model of every stage without a model of its own."""
    stage_models: dict[str, str] = Field(default_factory=dict, json_schema_extra=_env(STAGE_MODEL_PREFIX + "<STAGE>"))
    """The model of one stage, e.g. `SAFEFORGE_MODEL_EXTRACT=deepseek-chat` (stages: extract, generate, judge, eval)."""
    structured_output: Literal["auto", "json_schema", "json_object"] = Field("auto", json_schema_extra=_env("SAFEFORGE_STRUCTURED_OUTPUT"))
    """How JSON replies are requested: json_schema, json_object, or auto (json_schema until rejected)."""
    llm_db: Path | None = Field(None, json_schema_extra=_env("SAFEFORGE_LLM_DB"))
    """The SQLite file of the LLM cache and call ledger (unset: the run's `llm.sqlite`, else `<outputs>/llm/llm.sqlite`)."""
    llm_no_cache: bool = Field(False, json_schema_extra=_env("SAFEFORGE_LLM_NO_CACHE"))
    """Skip cache look-ups (fresh responses still replace cached ones)."""
    llm_timeout_s: float = SECONDS.field(120.0, json_schema_extra=_env("SAFEFORGE_LLM_TIMEOUT_S"))
    """Seconds before one HTTP request to the endpoint counts as timed out (and is retried)."""
    llm_max_attempts: int = Range(1, 100).field(5, json_schema_extra=_env("SAFEFORGE_LLM_MAX_ATTEMPTS"))
    """HTTP attempts per request, the first included."""
    llm_max_concurrency: int | None = Range(1, 1024).field(None, json_schema_extra=_env("SAFEFORGE_LLM_MAX_CONCURRENCY"))
    """Requests in flight at once (unset: a run's `--concurrency`, else 8)."""
    llm_rpm: float | None = RATE.field(None, json_schema_extra=_env("SAFEFORGE_LLM_RPM"))
    """Requests per minute (unset: unlimited)."""
    llm_tpm: float | None = RATE.field(None, json_schema_extra=_env("SAFEFORGE_LLM_TPM"))
    """Tokens per minute (unset: unlimited)."""
    llm_context_tokens: int = Range(1000, 10**8).field(128_000, json_schema_extra=_env("SAFEFORGE_LLM_CONTEXT_TOKENS"))
    """The models' context in tokens: a request larger than it (its messages at about 4 characters a token, plus its
    output cap) is refused before it is sent, so no call can cost more than a full context."""
    # -- generation -----------------------------------------------------------------------------
    extract_temperature: float = TEMPERATURE.field(0.0, json_schema_extra=_env("SAFEFORGE_EXTRACT_TEMPERATURE"))
    """Sampling temperature of the danger extractor (DESPITE's: 0)."""
    generate_temperature: float = TEMPERATURE.field(1.0, json_schema_extra=_env("SAFEFORGE_GENERATE_TEMPERATURE"))
    """Sampling temperature of the code generator (DESPITE's: 1, so repair rounds and similar records vary)."""
    judge_temperature: float = TEMPERATURE.field(0.5, json_schema_extra=_env("SAFEFORGE_JUDGE_TEMPERATURE"))
    """Sampling temperature of the quality judge (DESPITE's plan validation: 0.5)."""
    review_formalizations: bool = Field(False, json_schema_extra=_env("SAFEFORGE_REVIEW_FORMALIZATIONS"))
    """Hold each extracted formalization for people to review in Label Studio before code generation, as DESPITE
    does (`safeforge review push RUN --formalizations`, then pull, then resume the run)."""
    # -- local services -------------------------------------------------------------------------
    prefect_home: Path = Field(Path(".prefect"), json_schema_extra=_env("PREFECT_HOME"))
    """Prefect's home folder (its SQLite database lives there)."""
    prefect_port: int = PORT.field(4200, json_schema_extra=_env("SAFEFORGE_PREFECT_PORT"))
    """Port of the local Prefect server."""
    prefect_api_url: str | None = Field(None, json_schema_extra=_env("PREFECT_API_URL"))
    """The Prefect API in use (unset: the local server, `http://127.0.0.1:<prefect_port>/api`)."""
    replay_port: int = PORT.field(4280, json_schema_extra=_env("SAFEFORGE_REPLAY_PORT"))
    """Port of the replay LLM server of the offline demo."""
    replay_responses: Path | None = Field(None, json_schema_extra=_env("SAFEFORGE_REPLAY_RESPONSES"))
    """The replayed (hand-written) responses the demo's replay server serves (unset: the bundled ones)."""
    executor: Literal["local", "prefect", "dask"] = Field("local", json_schema_extra=_env("SAFEFORGE_EXECUTOR"))
    """How a generation run processes its records, from the CLI or the flow: `local` (this process, or `--workers N`
    processes), `prefect` (a Prefect task run per record), `dask` (checks on a Dask cluster)."""
    dask_address: str | None = Field(None, json_schema_extra=_env("SAFEFORGE_DASK_ADDRESS"))
    """Scheduler of an existing Dask cluster, e.g. `tcp://scheduler:8786` (unset: a temporary local cluster)."""
    dask_workers: int = Range(1, 256).field(2, json_schema_extra=_env("SAFEFORGE_DASK_WORKERS"))
    """Workers of the temporary local Dask cluster."""
    # -- input limits (`safeforge.common.limits`): a reader stops at each, naming it --------------
    max_nesting: int = _limit("nesting")
    """Deepest nesting of parentheses (PDDL, BDDL) or brackets (JSON: task metadata, source files, LLM replies)."""
    max_pddl_bytes: int = _limit("pddl_bytes")
    """Largest PDDL file (a task's domain or problem, or what DESPITE code builds)."""
    max_ground_facts: int = _limit("ground_facts")
    """Most ground facts a task may have (its predicates and functions over its objects)."""
    max_metadata_bytes: int = _limit("metadata_bytes")
    """Largest metadata.json of a task folder."""
    max_plan_chars: int = _limit("plan_chars")
    """Longest plan text read: one LLM planner's reply, or one line of a plans file (in bytes there)."""
    max_reply_chars: int = _limit("reply_chars")
    """Longest JSON reply of an LLM stage that is parsed (a longer one is an invalid reply)."""
    max_code_bytes: int = _limit("code_bytes")
    """Largest DESPITE code.py that is run."""
    max_record_file_bytes: int = _limit("record_file_bytes")
    """Largest file holding one source record (ALFRED trajectory, VirtualHome program or state, BDDL problem); a larger one is skipped."""
    max_row_chars: int = _limit("row_chars")
    """Longest row of a source table (NEISS, NormBank, the NEISS codebook); a longer row is skipped."""
    max_field_chars: int = _limit("field_chars")
    """Longest field of a source table; a row holding a longer one is skipped."""
    max_columns: int = _limit("columns")
    """Most columns of a source table's header (a wider table is not read)."""
    # -- review ---------------------------------------------------------------------------------
    label_studio_url: str = Field("http://127.0.0.1:8080", json_schema_extra=_env("LABEL_STUDIO_URL"))
    """The Label Studio server."""
    label_studio_api_key: SecretStr = Field(
        SecretStr("safeforge-local-demo-token"), json_schema_extra=_env("LABEL_STUDIO_API_KEY", "LABEL_STUDIO_USER_TOKEN")
    )
    """API token of a Label Studio admin (default: the local demo server's token)."""
    label_studio_username: str = Field("admin@safeforge.local", json_schema_extra=_env("LABEL_STUDIO_USERNAME"))
    """The admin user a server started by Safeforge creates (for the web interface)."""
    label_studio_password: SecretStr = Field(SecretStr("safeforge-local-demo"), json_schema_extra=_env("LABEL_STUDIO_PASSWORD"))
    """That admin's password (default: the local demo password)."""
    labelstudio_data: Path | None = Field(None, json_schema_extra=_env("SAFEFORGE_LABELSTUDIO_DATA"))
    """Data folder of the server `safeforge review server start` runs (unset: `<outputs>/.labelstudio`)."""
    labelstudio_database: Literal["sqlite", "postgresql"] | None = Field(None, json_schema_extra=_env("SAFEFORGE_LABELSTUDIO_DATABASE"))
    """Database of a new Label Studio server: sqlite (one reviewer) or postgresql (a team; a local
    PostgreSQL server). Unset: what the data folder holds, sqlite for a new one."""
    labelstudio_venv: Path = Field(Path(".venv-labelstudio"), json_schema_extra=_env("SAFEFORGE_LABELSTUDIO_VENV"))
    """The virtual environment holding the Label Studio server (made by `scripts/setup_labelstudio.sh`)."""
    # -- workbench ------------------------------------------------------------------------------
    workbench_port: int = ANY_PORT.field(4300, json_schema_extra=_env("SAFEFORGE_WORKBENCH_PORT"))
    """Port of `safeforge workbench` (on 127.0.0.1 only)."""
    workbench_url: str | None = Field(None, json_schema_extra=_env("SAFEFORGE_WORKBENCH_URL"))
    """The workbench that review tasks in Label Studio link to (unset: `http://127.0.0.1:<workbench_port>`)."""
    # -- publishing -----------------------------------------------------------------------------
    hf_token: SecretStr | None = Field(None, json_schema_extra=_env("HF_TOKEN"))
    """Hugging Face Hub token for `publish --repo-id`."""
    hf_endpoint: str | None = Field(None, json_schema_extra=_env("HF_ENDPOINT"))
    """Another Hub than huggingface.co (read by huggingface_hub itself)."""

    @field_validator("*", mode="after")
    @classmethod
    def _absolute(cls, value: Any) -> Any:
        """Relative paths are taken from the working directory at load time."""
        return value.expanduser().absolute() if isinstance(value, Path) else value

    # -- derived values -------------------------------------------------------------------------
    def input_limits(self) -> InputLimits:
        """The `max_*` settings as the readers' limits (`safeforge.common.limits.use_limits`)."""
        return InputLimits(**{name: getattr(self, f"max_{name}") for name in InputLimits.names()})

    @property
    def replay_responses_dir(self) -> Path:
        return self.replay_responses or package_path("safeforge", "llm", "replay_responses")

    @property
    def labelstudio_data_dir(self) -> Path:
        return self.labelstudio_data or self.outputs / ".labelstudio"

    @property
    def prefect_api(self) -> str:
        return self.prefect_api_url or f"http://{LOOPBACK}:{self.prefect_port}/api"

    @property
    def workbench_address(self) -> str:
        """The workbench's base URL, as review tasks link to it."""
        return (self.workbench_url or f"http://{LOOPBACK}:{self.workbench_port}").rstrip("/")

    @property
    def prefect_ui_url(self) -> str:
        """The Prefect UI belonging to the API URL in use."""
        api = self.prefect_api.rstrip("/")
        return api.removesuffix("/api")

    def prefect_env(self) -> dict[str, str]:
        """The Prefect variables Safeforge runs with (to merge into a process's environment)."""
        return {
            "PREFECT_HOME": str(self.prefect_home),
            "PREFECT_API_URL": self.prefect_api,
            "PREFECT_RUNNER_POLL_FREQUENCY": "1",
            **_ANALYTICS_OFF,
        }

    # -- loading --------------------------------------------------------------------------------
    @classmethod
    def load(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """The settings from `environ` (default: this process's environment); keyword arguments win.
        An empty variable counts as unset. A bad value raises SettingsError naming the variable."""
        return cls.load_with_sources(environ, **overrides)[0]

    @classmethod
    def load_with_sources(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> tuple[Settings, dict[str, str]]:
        """The settings and, per field, where its value came from (a variable's name or "default")."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        sources: dict[str, str] = {}
        for name, field in cls.model_fields.items():
            if name == "stage_models":
                found = {
                    key.removeprefix(STAGE_MODEL_PREFIX).lower(): value
                    for key, value in env.items()
                    if key.startswith(STAGE_MODEL_PREFIX) and value
                }
                if found:
                    values[name] = found
                    sources[name] = ", ".join(sorted(STAGE_MODEL_PREFIX + s.upper() for s in found))
                continue
            for variable in _variables(field):
                if env.get(variable, "").strip():
                    values[name], sources[name] = env[variable].strip(), variable
                    break
                if variable in env and field.annotation is SecretStr:
                    # a secret set to nothing is a mistake, never a reason to fall back to a default token
                    raise SettingsError(f"{variable} is set but empty: give the secret, or unset {variable}")
        values.update(overrides)
        sources.update({name: "argument" for name in overrides})
        try:
            settings = cls(**values)
        except ValidationError as exc:
            problems = []
            for error in exc.errors():
                field_name = str(error["loc"][0])
                variable = sources.get(field_name, field_name)
                allowed = cls.range_of(field_name)
                must = f" (it must be {allowed.describe()})" if allowed else ""
                problems.append(f"{variable}={values.get(field_name)!r}: {error['msg']}{must}")
            raise SettingsError("; ".join(problems)) from None
        return settings, {name: sources.get(name, "default") for name in cls.model_fields}

    @classmethod
    def range_of(cls, name: str) -> Range | None:
        """The range of a setting that is a number (None for the others)."""
        field = cls.model_fields[name]
        bounds = {type(rule).__name__: getattr(rule, type(rule).__name__.lower(), None) for rule in field.metadata}
        low, high = bounds.get("Gt", bounds.get("Ge")), bounds.get("Le")
        if low is None or high is None:
            return None
        whole = int in (field.annotation, *get_args(field.annotation))
        return Range(low, high, whole=whole, low_open="Gt" in bounds)

    @classmethod
    def variables(cls) -> list[tuple[str, str, str, str]]:
        """(variable, field, default, meaning) for every setting, in declaration order (for the docs)."""
        rows = []
        for name, field in cls.model_fields.items():
            variable = " or ".join(_variables(field))
            default = field.get_default(call_default_factory=False)
            shown = "(per stage)" if name == "stage_models" else describe_default(name, default)
            rows.append((variable, name, shown, " ".join((field.description or "").split())))
        return rows


def describe_default(name: str, default: Any) -> str:
    if default is None:
        return "unset"
    if name == "data_dir":
        return "$XDG_DATA_HOME/safeforge (~/.local/share/safeforge)"
    if isinstance(default, SecretStr):
        return "(local demo value)"
    return str(default)


@dataclass(frozen=True)
class SettingRow:
    """One line of `safeforge config`."""

    field: str
    variable: str
    value: str
    source: str


def effective_settings(environ: Mapping[str, str] | None = None) -> list[SettingRow]:
    """Every setting's effective value (secrets shown as set/unset) and where it came from."""
    settings, sources = Settings.load_with_sources(environ)
    variables = {field: variable for variable, field, _, _ in Settings.variables()}
    rows = []
    for name in Settings.model_fields:
        value = getattr(settings, name)
        if isinstance(value, SecretStr):
            shown = "(set, hidden)" if sources[name] != "default" else "(local demo value, hidden)"
        elif value is None:
            derived = {
                "replay_responses": settings.replay_responses_dir,
                "labelstudio_data": settings.labelstudio_data_dir,
                "prefect_api_url": settings.prefect_api,
                "workbench_url": settings.workbench_address,
            }.get(name)
            shown = "(unset)" if derived is None else f"(unset) -> {derived}"
        elif isinstance(value, dict):
            shown = ", ".join(f"{k}={v}" for k, v in sorted(value.items())) or "(none)"
        else:
            shown = str(value)
        rows.append(SettingRow(name, variables[name], shown, sources[name]))
    return rows
