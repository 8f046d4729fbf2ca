"""varprobe.models.parts: a GGUF file split over packages, joined once, each part checked."""

from __future__ import annotations

import base64
import hashlib
import importlib
import sys
from pathlib import Path

import pytest
import yaml
from helpers import REPO
from test_model_cache import GGUF, _assert_same_model, write_tiny_gguf

from varprobe.data.sources import Digest
from varprobe.models import cache, parts
from varprobe.models.loading import check_available, load_causal_lm
from varprobe.models.spec import ModelSpec, ModelUnavailable

PACKAGES = tuple(f"tiny_part{i}" for i in range(1, 4))


def _install(site: Path, package: str, data: bytes, with_getter: bool) -> None:
    """``package`` in ``site`` holding ``data`` as its one part file, with the ``RECORD`` pip
    writes (the part's SHA-256 and size); ``with_getter`` gives it a ``get_part_path()``."""
    folder = site / package / "data"
    folder.mkdir(parents=True)
    (folder / "part.bin").write_bytes(data)
    getter = ("import os\ndef get_part_path():\n    return os.path.join(os.path.dirname("
              "os.path.abspath(__file__)), 'data', 'part.bin')\n")
    (site / package / "__init__.py").write_text(getter if with_getter else "")
    info = site / f"{package}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package.replace('_', '-')}\n"
                                   "Version: 0.1.0\n")
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    (info / "RECORD").write_text(f"{package}/data/part.bin,sha256={digest},{len(data)}\n"
                                 f"{package}/__init__.py,,\n")


@pytest.fixture(scope="module")
def whole(tmp_path_factory) -> bytes:
    folder = tmp_path_factory.mktemp("whole")
    write_tiny_gguf(folder / GGUF)
    return (folder / GGUF).read_bytes()


@pytest.fixture
def site(whole, tmp_path, monkeypatch) -> Path:
    """Three installed part packages of the tiny GGUF (the second without a getter)."""
    site = tmp_path / "site"
    third = len(whole) // 3 + 1
    for i, package in enumerate(PACKAGES):
        _install(site, package, whole[i * third:(i + 1) * third], with_getter=i != 1)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    for package in PACKAGES:
        monkeypatch.delitem(sys.modules, package, raising=False)
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "models"))
    return site


def _spec(whole: bytes, order=PACKAGES) -> ModelSpec:
    return ModelSpec.from_config({"name": "tiny-parts", "parts": list(order), "gguf_file": GGUF,
                                  "sha256": hashlib.sha256(whole).hexdigest()})


def test_parts_load_the_model_of_the_whole_file_and_join_once(whole, site, tmp_path, monkeypatch):
    spec = _spec(whole)
    assert spec.kind == "network" and spec.local_problem() is None
    joins = []
    real = parts._concatenate
    monkeypatch.setattr(parts, "_concatenate", lambda files, out: joins.append(out) or real(files, out))
    cached = load_causal_lm(spec)
    load_causal_lm(spec)
    assert len(joins) == 1
    joined = parts.folder(GGUF, spec.sha256) / GGUF
    assert joined.read_bytes() == whole
    (tmp_path / "whole").mkdir()
    (tmp_path / "whole" / GGUF).write_bytes(whole)
    monkeypatch.setenv(cache.CACHE_ENV, "off")
    direct = load_causal_lm(ModelSpec(name="whole", pretrained=str(tmp_path / "whole"), gguf_file=GGUF))
    _assert_same_model(cached, direct, ["the thin hen"])


def test_a_cached_load_of_parts_hashes_the_joined_file_once(whole, site, monkeypatch):
    spec = _spec(whole)
    load_causal_lm(spec)
    joined = parts.folder(GGUF, spec.sha256) / GGUF
    hashed = []
    real = Digest.of.__func__
    monkeypatch.setattr(Digest, "of", classmethod(lambda cls, path: hashed.append(Path(path)) or real(cls, path)))
    load_causal_lm(spec)
    assert hashed.count(joined) == 1


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_partial_or_altered_part_is_named_by_its_package(whole, site, damage):
    part = site / PACKAGES[1] / "data" / "part.bin"
    data = part.read_bytes()
    part.write_bytes(data[:-7] if damage == "truncate" else bytes([data[0] ^ 1]) + data[1:])
    with pytest.raises(ModelUnavailable, match=rf"part package '{PACKAGES[1]}'.*partial or altered.*"
                                               rf"--force-reinstall tiny-part2"):
        check_available(_spec(whole))


def test_a_damaged_joined_file_is_written_again(whole, site, capsys):
    spec = _spec(whole)
    first = parts.joined(spec.parts, GGUF, spec.sha256)
    first.write_bytes(first.read_bytes()[:-3])
    capsys.readouterr()
    assert parts.joined(spec.parts, GGUF, spec.sha256).read_bytes() == whole
    said = capsys.readouterr().err  # the job's log says why it was written again
    assert f"varprobe: model cache: {first}: sha256 " in said and f"not the configured {spec.sha256}" in said


def test_parts_in_the_wrong_order_fail_on_the_whole_digest(whole, site):
    spec = _spec(whole, order=(PACKAGES[1], PACKAGES[0], PACKAGES[2]))
    with pytest.raises(ModelUnavailable, match="join into a file of sha256 .* check the order of `parts`"):
        check_available(spec)
    assert not list(parts.folder(GGUF, spec.sha256).glob("*.gguf"))


def test_a_missing_part_package_is_named_before_any_job(whole, site):
    spec = _spec(whole, order=(*PACKAGES, "tiny_part_absent"))
    assert "part package 'tiny_part_absent' is not installed" in spec.local_problem()
    with pytest.raises(ModelUnavailable, match="tiny_part_absent"):
        spec.location()


def test_parts_need_the_joined_file_and_its_digest():
    with pytest.raises(ValueError, match="parts need gguf_file .* and sha256"):
        ModelSpec.from_config({"name": "q", "parts": list(PACKAGES), "gguf_file": GGUF})


@pytest.mark.slow
def test_qwen_joined_from_its_six_packages_is_the_documented_model():
    """The real Qwen2.5-Coder-0.5B-Instruct (configs/qwen.yaml): joined, checked, converted and
    loaded as the issue's model card states it."""
    entry = next(m for m in yaml.safe_load((REPO / "configs/qwen.yaml").read_text())["models"]
                 if m["name"] == "qwen2.5-coder-0.5b-instruct")
    loaded = load_causal_lm(ModelSpec.from_config(entry))
    config = loaded.model.config
    assert type(loaded.model).__name__ == "Qwen2ForCausalLM"
    assert (config.num_hidden_layers, config.hidden_size, config.num_attention_heads,
            config.num_key_value_heads, config.vocab_size) == (24, 896, 14, 2, 151_936)
    assert not config.tie_word_embeddings
    assert sum(p.numel() for p in loaded.model.parameters()) == 630_167_424
    assert "<|im_start|>" in loaded.tokenizer.chat_template
