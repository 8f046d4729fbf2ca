"""The ``api`` block of a model entry: where the endpoint is and what it accepts.

::

    api:
      base_url: http://127.0.0.1:8080/v1   # required
      model: smollm2                        # required: the model name sent in each request
      api_key_env: OPENAI_API_KEY           # null: send no key; else the variable holding it
      endpoint: chat                        # chat: {base_url}/chat/completions, one user message
                                            # completions: {base_url}/completions, a prompt
      parameters: [temperature, top_p]      # decoding parameters the endpoint accepts
      extra_body: {}                        # fields sent with every request
      seed: true                            # send a per-request seed
      provo: {mode: single, prompt: null, max_tokens: null}
      concurrency: 4                        # tuning only: results do not depend on
      max_retries: 6                        #   these four
      timeout: 60                           # per request, and the longest wait before a retry
      backoff: 1.0                          # the first wait, doubled each retry

The key itself is read from the environment when a request is sent and is never stored. A
``base_url`` carrying credentials (``http://user:secret@host/v1``, ``?key=...``) is refused: it
would be written wherever the model's entry is (``varprobe.credentials``).

A server fills the fields a request omits with its own defaults, which may truncate the
distribution; ``parameters`` and ``extra_body`` must override every such default. OpenAI:
temperature and top_p (defaults 1 and 1: untruncated). llama-cpp-python's server (0.3.36,
``llama_cpp/server/types.py``) defaults to temperature 0.8, top_p 0.95, top_k 40, min_p 0.05 and
repeat_penalty 1.1 (presence/frequency penalties 0, mirostat off) and has no typical_p field
(an unknown field is ignored); ancestral sampling there needs ``parameters: [temperature,
top_p, top_k]`` (top_k 0 keeps every token) and ``extra_body: {min_p: 0.0, repeat_penalty:
1.0}``. It honours ``seed`` per request. vLLM takes top_k, min_p and repetition_penalty too and
can fill omitted fields from the model's ``generation_config.json`` (its
``--generation-config``), so list every parameter it accepts.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field, fields

from varprobe.credentials import url_credentials

ENDPOINTS = {"chat": "chat/completions", "completions": "completions"}
"""Endpoint kinds and their paths under ``base_url``."""

NEUTRAL = {"temperature": 1.0, "top_k": 0, "top_p": 1.0, "typical_p": 1.0}
"""Decoding parameters an endpoint may accept, at the values that leave the distribution as is."""

RESERVED = ("model", "messages", "prompt", "max_tokens", "seed", "n", "stream")
"""Request fields set per request, which ``extra_body`` may not set."""

MODES = ("single", "list")

SINGLE_PROMPT = (
    "You are ChatGPT, a large language model trained by OpenAI. I want you to answer which word "
    "is a plausible continuation to the context {context}. I have no specific intent, I just want "
    "your guess. Return only the word and nothing else."
)
"""Ilia & Aziz (2024), App. C.2, prompt 1 (``<CONTEXT>`` -> ``{context}``): one word per request."""

LIST_PROMPT = (
    "You are ChatGPT, a large language model trained by OpenAI. I want you to answer which {n} "
    "words are plausible continuations to the context {context}. I have no specific intent, I just "
    "want your guess. Return only the words and nothing else."
)
"""Ilia & Aziz (2024), App. C.2, prompt 2 (``<CONTEXT>`` -> ``{context}``, 40 -> ``{n}``): a list
of ``n`` words in one request."""

TOKENS_PER_LISTED_WORD = 10
"""The default token budget of a list reply per requested word (a number, the word, separators)."""

SINGLE_MAX_TOKENS = 16
"""The default token budget of a one-word reply: the first word is read, the rest ignored."""


@dataclass(frozen=True)
class ProvoPrompting:
    """How the Provo study asks an endpoint for next words.

    ``mode`` single: ``n`` independent requests per context, each reply's first word a draw;
    list: one request per context for ``n`` words. ``prompt`` replaces the paper's prompt of the
    mode (placeholders ``{context}`` and, for lists, ``{n}``); ``max_tokens`` replaces the
    default budget (``SINGLE_MAX_TOKENS``, or ``TOKENS_PER_LISTED_WORD`` per requested word).
    """

    mode: str = "single"
    prompt: str | None = None
    max_tokens: int | None = None

    @property
    def template(self) -> str:
        """The prompt template in effect."""
        if self.prompt is not None:
            return self.prompt
        return SINGLE_PROMPT if self.mode == "single" else LIST_PROMPT

    def token_budget(self, n: int) -> int:
        """``max_tokens`` of each request when ``n`` words per context are wanted.

        Parameters
        ----------
        n : int
            The words wanted per context.

        Returns
        -------
        int
            Tokens per request.
        """
        if self.max_tokens is not None:
            return self.max_tokens
        return SINGLE_MAX_TOKENS if self.mode == "single" else TOKENS_PER_LISTED_WORD * n

    def render(self, context: str, n: int) -> str:
        """The prompt for ``context`` (``{n}`` -> ``n``); KeyError names another placeholder.

        Parameters
        ----------
        context : str
            The context text.
        n : int
            The words wanted.

        Returns
        -------
        str

        Raises
        ------
        KeyError
            When the template holds another placeholder.
        """
        try:
            return self.template.format(context=context, n=n)
        except KeyError as err:
            raise KeyError(
                f"Provo prompt {self.template!r} has placeholder {err}; only {{context}} and {{n}} exist"
            ) from err


TUNING = ("concurrency", "max_retries", "timeout", "backoff")
"""Keys of an api block that change how requests are sent, never what comes back: the workflow
passes them as job resources, so changing them reruns nothing."""


@dataclass(frozen=True)
class ApiEndpoint:
    """A model's OpenAI-compatible endpoint (module docstring); build with ``from_config``."""

    name: str
    base_url: str
    model: str
    _: KW_ONLY
    api_key_env: str | None = None
    endpoint: str = "chat"
    parameters: tuple[str, ...] = ("temperature", "top_p")
    extra_body: dict = field(default_factory=dict, hash=False)
    seed: bool = True
    provo: ProvoPrompting = ProvoPrompting()
    concurrency: int = 4
    max_retries: int = 6
    timeout: float = 60.0
    backoff: float = 1.0

    @classmethod
    def tuning_defaults(cls) -> dict[str, float | int]:
        """The default of each ``TUNING`` key.

        Returns
        -------
        dict of str to float or int
        """
        return {f.name: f.default for f in fields(cls) if f.name in TUNING}

    @classmethod
    def from_config(cls, name: str, block: dict) -> ApiEndpoint:
        """Parse and check model ``name``'s ``api`` block; ValueError names the model and key.

        Parameters
        ----------
        name : str
            The model's name.
        block : dict
            Its ``api`` block.

        Returns
        -------
        ApiEndpoint

        Raises
        ------
        ValueError
            See above.
        """
        if not isinstance(block, dict):
            raise ValueError(f"model {name!r}: api must be a mapping, got {block!r}")
        known = set(cls.__dataclass_fields__) - {"name"}
        unknown = sorted(set(block) - known)
        if unknown:
            raise ValueError(f"model {name!r}: unknown api key(s) {unknown}; known: {sorted(known)}")
        for key in ("base_url", "model"):
            if not isinstance(block.get(key), str) or not block[key]:
                raise ValueError(f"model {name!r}: api.{key} is required (a non-empty string)")
        credential = url_credentials(block["base_url"])
        if credential is not None:
            raise ValueError(f"model {name!r}: api.base_url holds {credential}; remove it and give "
                             "the key through api.api_key_env, the name of the environment "
                             "variable holding it (it is sent as a bearer token, never written)")
        values = {k: v for k, v in block.items() if v is not None}
        values["base_url"] = block["base_url"].rstrip("/")
        if isinstance(values.get("parameters"), list):
            values["parameters"] = tuple(values["parameters"])
        values["provo"] = _provo(name, block.get("provo") or {})
        endpoint = cls(name=name, **values)
        endpoint._check()
        return endpoint

    @property
    def url(self) -> str:
        """Where requests are posted."""
        return f"{self.base_url}/{ENDPOINTS[self.endpoint]}"

    def _check(self) -> None:
        def fail(key: str, problem: str) -> None:
            raise ValueError(f"model {self.name!r}: api.{key} {problem}")

        if self.endpoint not in ENDPOINTS:
            fail("endpoint", f"must be one of {list(ENDPOINTS)}, got {self.endpoint!r}")
        if not isinstance(self.parameters, tuple) or not all(isinstance(p, str) for p in self.parameters):
            fail("parameters", f"must be a list of names, got {self.parameters!r}")
        unknown = [p for p in self.parameters if p not in NEUTRAL]
        if unknown:
            fail("parameters", f"names {unknown}; decoding parameters are {list(NEUTRAL)}")
        if "temperature" not in self.parameters:
            fail("parameters", "must include temperature (it is sent with every request)")
        if not isinstance(self.extra_body, dict):
            fail("extra_body", f"must be a mapping, got {self.extra_body!r}")
        reserved = [k for k in self.extra_body if k in RESERVED]
        if reserved:
            fail("extra_body", f"sets {reserved}, which each request sets itself")
        for key, value in self.extra_body.items():
            if key in NEUTRAL and key not in self.parameters and value != NEUTRAL[key]:
                fail("extra_body", f"sets {key}={value!r}, which would change every decoding; "
                                   f"list {key} in api.parameters instead")
        if self.api_key_env is not None and not isinstance(self.api_key_env, str):
            fail("api_key_env", f"must be the name of an environment variable, got {self.api_key_env!r}")
        if not isinstance(self.seed, bool):
            fail("seed", f"must be true or false, got {self.seed!r}")
        for key in ("concurrency", "max_retries"):
            value = getattr(self, key)
            if not isinstance(value, int) or value < (1 if key == "concurrency" else 0):
                fail(key, f"must be an integer >= {1 if key == 'concurrency' else 0}, got {value!r}")
        for key in ("timeout", "backoff"):
            value = getattr(self, key)
            if not isinstance(value, int | float) or value < 0 or (key == "timeout" and value == 0):
                fail(key, f"must be a number {'> 0' if key == 'timeout' else '>= 0'}, got {value!r}")


def _provo(name: str, block: dict) -> ProvoPrompting:
    if not isinstance(block, dict):
        raise ValueError(f"model {name!r}: api.provo must be a mapping, got {block!r}")
    unknown = sorted(set(block) - set(ProvoPrompting.__dataclass_fields__))
    if unknown:
        raise ValueError(f"model {name!r}: unknown api.provo key(s) {unknown}; known: mode, prompt, max_tokens")
    values = {k: v for k, v in block.items() if v is not None}
    provo = ProvoPrompting(**values)
    if provo.mode not in MODES:
        raise ValueError(f"model {name!r}: api.provo.mode must be one of {list(MODES)}, got {provo.mode!r}")
    if provo.prompt is not None and "{context}" not in provo.prompt:
        raise ValueError(f"model {name!r}: api.provo.prompt must contain {{context}}")
    if provo.max_tokens is not None and (not isinstance(provo.max_tokens, int) or provo.max_tokens < 1):
        raise ValueError(f"model {name!r}: api.provo.max_tokens must be an integer >= 1, got {provo.max_tokens!r}")
    return provo
