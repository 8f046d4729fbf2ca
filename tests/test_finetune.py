"""Fine-tuning (Ilia & Aziz 2024, App. F) on the tiny models of conftest: folds, passages, the
frozen blocks, the training loop's determinism, checkpoints through the loading path, the CLI."""

from __future__ import annotations

import hashlib
import json

import pandas as pd
import pytest
import torch

from varprobe import tables
from varprobe.cli import build_parser
from varprobe.data.provo import contexts_table, passages_table
from varprobe.finetune.blocks import freeze_all_but_last, transformer_blocks
from varprobe.finetune.examples import (
    IGNORE,
    collate,
    end_token,
    length_limit,
    pair_examples,
    text_examples,
)
from varprobe.finetune.folds import contiguous_folds, training_ids
from varprobe.finetune.settings import FinetuneSettings
from varprobe.finetune.training import learning_rate_factor, train
from varprobe.models.checkpoint import MANIFEST, WEIGHTS, apply_checkpoint, save_checkpoint
from varprobe.models.loading import load_causal_lm, load_generator
from varprobe.models.spec import ModelSpec

FAST = {"epochs": 3, "batch_size": 2, "warmup_steps": 0, "learning_rate": 5e-3,
        "trainable_blocks": 1}
"""Settings of the runs here: the tiny GPT-2 has 2 blocks, so 1 trainable block leaves one frozen."""


# ---- folds -----------------------------------------------------------------------------------


def test_folds_of_the_paper_protocol():
    passages = list(range(1, 41))
    folds = contiguous_folds(passages, 4)
    assert folds == [list(range(1, 11)), list(range(11, 21)), list(range(21, 31)), list(range(31, 41))]
    assert training_ids(passages, 4, 2) == list(range(1, 11)) + list(range(21, 41))


def test_uneven_folds_put_the_larger_ones_first_and_keep_the_given_order():
    ids = [7, 3, 9, 1, 5, 2, 8, 4, 6, 10]
    folds = contiguous_folds(ids, 3)
    assert folds == [[7, 3, 9, 1], [5, 2, 8], [4, 6, 10]]
    assert training_ids(ids, 3, 2) == [7, 3, 9, 1, 4, 6, 10]
    assert contiguous_folds(ids, 10) == [[i] for i in ids]
    assert contiguous_folds(ids, 1) == [ids]


@pytest.mark.parametrize("ids, k, message", [
    ([1, 2, 3], 4, "k = 4"), ([1, 2, 3], 0, "k = 0"), ([1, 2, 2], 2, r"\[2\] repeat"),
])
def test_impossible_folds_are_errors(ids, k, message):
    with pytest.raises(ValueError, match=message):
        contiguous_folds(ids, k)


def test_a_fold_out_of_range_is_an_error():
    with pytest.raises(ValueError, match="fold 5"):
        training_ids(range(1, 41), 4, 5)


# ---- passages --------------------------------------------------------------------------------


def test_passages_table_holds_each_cleaned_passage_once(provo_norms):
    passages = passages_table(provo_norms)
    assert list(passages["text_id"]) == list(range(1, 56))
    assert passages["text"].str.startswith("There are now rumblings").iloc[0]
    assert not passages["text"].str.contains("Õ").any()
    assert passages["text"].str.contains("doesn't").any()  # the repaired apostrophe
    contexts = contexts_table(provo_norms, [41])
    last = contexts.iloc[-1]
    assert passages.set_index("text_id").loc[41, "text"] == f"{last['context']} {last['word']}"


def test_passages_table_selects_passages_and_names_unknown_ones(provo_norms):
    assert list(passages_table(provo_norms, [55, 41])["text_id"]) == [41, 55]
    with pytest.raises(ValueError, match=r"\[56\]"):
        passages_table(provo_norms, [1, 56])


# ---- settings and blocks ---------------------------------------------------------------------


def test_default_settings_are_the_paper_protocol():
    settings = FinetuneSettings.from_config({})
    assert (settings.epochs, settings.learning_rate, settings.adam_epsilon, settings.batch_size,
            settings.trainable_blocks, settings.seed) == (10, 5e-4, 1e-8, 5, 2, 0)
    # The authors' script trains the norms of the last two blocks and the final one; the run keeps
    # the epoch of lowest validation loss.
    assert (settings.trainable_parts, settings.keep_epoch) == ("norms", "best")
    assert FinetuneSettings.from_config({"epochs": 2}).to_dict()["epochs"] == 2


@pytest.mark.parametrize("entry, message", [
    ({"epoch": 3}, "epoch"), ({"batch_size": 0}, "batch_size"), ({"lr_schedule": "cosine"}, "cosine"),
    ({"trainable_parts": "heads"}, "heads"), ({"learning_rate": 0}, "learning_rate"),
    ({"keep_epoch": "first"}, "keep_epoch.*first"),
])
def test_bad_settings_are_named(entry, message):
    with pytest.raises(ValueError, match=message):
        FinetuneSettings.from_config(entry)


def test_learning_rate_schedules():
    linear = [learning_rate_factor(s, 2, 6, "linear") for s in range(7)]
    assert linear == [0.0, 0.5, 1.0, 0.75, 0.5, 0.25, 0.0]
    assert [learning_rate_factor(s, 2, 6, "constant") for s in range(4)] == [0.0, 0.5, 1.0, 1.0]
    assert learning_rate_factor(0, 0, 6, "linear") == 1.0


def fresh(tiny_model_dir):
    """The tiny GPT-2 loaded anew (training changes a model in place)."""
    return load_causal_lm(ModelSpec(name="tiny", pretrained=str(tiny_model_dir)))


def test_the_block_lists_of_gpt2_t5_and_marian(tiny_model_dir, tiny_seq2seq_dirs):
    gpt2 = fresh(tiny_model_dir).model
    assert transformer_blocks(gpt2) is gpt2.transformer.h
    t5 = load_generator(ModelSpec(name="t5", pretrained=str(tiny_seq2seq_dirs["t5"]))).model
    assert transformer_blocks(t5) is t5.decoder.block
    marian = load_generator(ModelSpec(name="m", pretrained=str(tiny_seq2seq_dirs["marian"]))).model
    assert transformer_blocks(marian) is marian.model.decoder.layers


def three_block_models():
    """A random GPT-2 (LayerNorm) and a random Llama (SmolLM2's architecture, RMSNorm), 3 blocks."""
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    gpt2 = GPT2LMHeadModel(GPT2Config(vocab_size=40, n_layer=3, n_head=2, n_embd=16, n_positions=32,
                                      bos_token_id=0, eos_token_id=0))
    llama = LlamaForCausalLM(LlamaConfig(vocab_size=40, hidden_size=16, intermediate_size=32,
                                         num_hidden_layers=3, num_attention_heads=2, num_key_value_heads=1,
                                         max_position_embeddings=32, bos_token_id=0, eos_token_id=0))
    return gpt2, llama


def test_the_default_trains_the_norms_of_the_last_two_blocks_and_the_final_norm():
    """As the authors' fine_tuning.py (line 245) unfreezes GPT-2's h[10].ln_1, h[10].ln_2,
    h[11].ln_1, h[11].ln_2 and ln_f; on Llama/SmolLM2 the same places hold RMSNorms."""
    gpt2, llama = three_block_models()
    settings = FinetuneSettings()
    expected = {
        gpt2: [f"transformer.{m}.{w}" for m in ("h.1.ln_1", "h.1.ln_2", "h.2.ln_1", "h.2.ln_2", "ln_f")
               for w in ("weight", "bias")],
        llama: [f"model.{m}.weight" for m in ("layers.1.input_layernorm", "layers.1.post_attention_layernorm",
                                              "layers.2.input_layernorm", "layers.2.post_attention_layernorm",
                                              "norm")],
    }
    for model, names in expected.items():
        trainable = freeze_all_but_last(model, settings.trainable_blocks, settings.trainable_parts)
        assert sorted(trainable) == sorted(names)
        assert sorted(n for n, p in model.named_parameters() if p.requires_grad) == sorted(names)
    # The existing mode: every parameter of the last two blocks, no final norm, nothing of block 0.
    for model, stack in ((gpt2, "transformer.h."), (llama, "model.layers.")):
        blocks = freeze_all_but_last(model, 2, "blocks")
        assert {n for n, p in model.named_parameters() if p.requires_grad} == set(blocks)
        assert {n[len(stack)] for n in blocks} == {"1", "2"} and all(n.startswith(stack) for n in blocks)
        assert any("attn" in n for n in blocks)


def test_freezing_leaves_only_the_last_blocks_trainable(tiny_model_dir):
    model = fresh(tiny_model_dir).model
    names = freeze_all_but_last(model, 1)
    assert names and all(n.startswith("transformer.h.1.") for n in names)
    assert {n for n, p in model.named_parameters() if p.requires_grad} == set(names)
    assert len(freeze_all_but_last(model, 2)) == 2 * len(names)
    norms = freeze_all_but_last(model, 1, "norms")
    assert sorted(norms) == sorted(f"transformer.{m}.{w}" for m in ("h.1.ln_1", "h.1.ln_2", "ln_f")
                                   for w in ("weight", "bias"))
    with pytest.raises(ValueError, match="trainable_blocks = 3.*2 blocks"):
        freeze_all_but_last(model, 3)


# ---- examples --------------------------------------------------------------------------------


def test_causal_pairs_carry_loss_on_the_target_and_its_end_only(tiny_model):
    tokenizer, model = tiny_model.tokenizer, tiny_model.model
    end = end_token(model, tokenizer)
    [example] = pair_examples(tokenizer, [("a/0", "Story: the cat\n", "It sat.")], seq2seq=False,
                              chat=False, end=end, max_length=64)
    prompt = tokenizer("Story: the cat\n")["input_ids"]
    target = tokenizer("It sat.", add_special_tokens=False)["input_ids"] + [end]
    assert list(example.input_ids) == prompt + target
    assert list(example.labels) == [IGNORE] * len(prompt) + target
    with pytest.raises(ValueError, match="pair 'a/0'"):
        pair_examples(tokenizer, [("a/0", "Story: the cat\n", "It sat.")], seq2seq=False, chat=False, end=end,
                      max_length=len(prompt))


def test_chat_pairs_follow_the_chat_template(tiny_model_dir):
    tokenizer = fresh(tiny_model_dir).tokenizer
    tokenizer.chat_template = ("{% for m in messages %}User: {{ m['content'] }}\n{% endfor %}"
                               "{% if add_generation_prompt %}Assistant:{% endif %}")
    [example] = pair_examples(tokenizer, [("a/0", "Hi", " Hello")], seq2seq=False, chat=True, end=50256,
                              max_length=64)
    prompt = tokenizer("User: Hi\nAssistant:")["input_ids"]
    assert list(example.input_ids[: len(prompt)]) == prompt
    assert example.labels[len(prompt) - 1] == IGNORE and example.labels[len(prompt)] != IGNORE


def test_padding_never_carries_loss(tiny_model):
    examples = text_examples(tiny_model.tokenizer, ["The cat sat on the mat.", "A dog ran."], 64)
    batch = collate(examples, pad_id=50256)
    short = len(examples[1].input_ids)
    assert batch["attention_mask"][1].tolist() == [1] * short + [0] * (batch["input_ids"].shape[1] - short)
    assert (batch["labels"][1, short:] == IGNORE).all()


# ---- training --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(provo_norms, tiny_model):
    """Provo passages 1-6 for training and 41-42 for validation, as tiny-GPT-2 examples."""
    text = passages_table(provo_norms).set_index("text_id")["text"]
    return (text_examples(tiny_model.tokenizer, list(text.loc[1:6]), 256),
            text_examples(tiny_model.tokenizer, list(text.loc[41:42]), 256))


def run(tiny_model_dir, corpus, **settings):
    """A fresh tiny GPT-2 trained on ``corpus`` under FAST overridden by ``settings``."""
    loaded = fresh(tiny_model_dir)
    training = train(loaded.model, *corpus, FinetuneSettings(**{**FAST, **settings}), pad_id=50256)
    return loaded, training


def test_training_changes_the_trainable_parameters_only(tiny_model_dir, tiny_model, corpus):
    loaded, training = run(tiny_model_dir, corpus)
    before = dict(tiny_model.model.named_parameters())
    for name, parameter in loaded.model.named_parameters():
        assert torch.equal(parameter, before[name]) == (name not in training.trainable), name
    assert not loaded.model.training


def test_training_loss_decreases_and_the_losses_are_complete(tiny_model_dir, corpus):
    # Every parameter of the last block: the norms alone of a random 32-d model barely move its
    # loss in three epochs.
    _, training = run(tiny_model_dir, corpus, trainable_parts="blocks")
    train_loss = [x.loss for x in training.losses if x.split == "train"]
    validation = [x for x in training.losses if x.split == "validation"]
    assert train_loss[-1] < train_loss[0]
    assert [x.epoch for x in validation] == [0, 1, 2, 3]
    n_tokens = sum(len(e.input_ids) - 1 for e in corpus[0])
    assert all(x.tokens == n_tokens and x.examples == 6 for x in training.losses if x.split == "train")


def test_the_validation_loss_is_a_mean_per_token(tiny_model_dir, corpus):
    """Token weighting and masked padding make it independent of how examples are batched."""
    losses = [run(tiny_model_dir, corpus, epochs=1, batch_size=b)[1].losses[0].loss for b in (1, 2)]
    assert losses[0] == pytest.approx(losses[1], rel=1e-6)


def test_the_seed_alone_decides_a_run(tiny_model_dir, corpus):
    runs = [run(tiny_model_dir, corpus, seed=s, epochs=2) for s in (0, 0, 1)]
    (first, a), (second, b), (_, c) = runs
    assert a.losses == b.losses
    weights = [dict(m.model.named_parameters()) for m, _ in runs]
    assert all(torch.equal(weights[0][n], weights[1][n]) for n in a.trainable)
    assert [x.loss for x in c.losses[1:]] != [x.loss for x in a.losses[1:]]


@pytest.mark.parametrize("parts", ["norms", "blocks"])
@pytest.mark.parametrize("kind", ["t5", "marian"])
def test_seq2seq_training_touches_the_last_decoder_block_only(tiny_seq2seq_dirs, kind, parts):
    spec = ModelSpec(name=kind, pretrained=str(tiny_seq2seq_dirs[kind]))
    loaded, base = load_generator(spec), load_generator(spec)
    pairs = [("0/0", "the cat sat on the mat", "die Katze saß auf der Matte"),
             ("1/0", "the dog ran", "der Hund lief"), ("2/0", "the house is big", "das Haus ist groß")]
    end = end_token(loaded.model, loaded.tokenizer)
    examples = pair_examples(loaded.tokenizer, pairs, seq2seq=True, chat=False, end=end, max_length=64)
    training = train(loaded.model, examples, examples[:1], FinetuneSettings(**FAST, trainable_parts=parts),
                     pad_id=loaded.tokenizer.pad_token_id)
    last = "decoder.block.1." if kind == "t5" else "model.decoder.layers.1."
    final = "decoder.final_layer_norm." if kind == "t5" else "model.decoder.layer_norm."
    if parts == "blocks":
        assert training.trainable and all(n.startswith(last) for n in training.trainable)
    else:
        assert training.trainable and all(n.startswith(last) and "norm" in n or n.startswith(final)
                                           for n in training.trainable)
    before = dict(base.model.named_parameters())
    changed = {n for n, p in loaded.model.named_parameters() if not torch.equal(p, before[n])}
    assert changed and changed <= set(training.trainable)


# ---- checkpoints -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trained(tmp_path_factory, tiny_model_dir, corpus):
    """A trained tiny GPT-2 and its checkpoint folder."""
    loaded, training = run(tiny_model_dir, corpus)
    folder = tmp_path_factory.mktemp("ckpt") / "fold-1"
    save_checkpoint(loaded.model, training.trainable, folder, {"fold": 1})
    return loaded, training, folder


def test_the_checkpoint_holds_the_trained_parameters_only(trained):
    _, training, folder = trained
    assert sorted(p.name for p in folder.iterdir()) == sorted([MANIFEST, WEIGHTS])
    manifest = json.loads((folder / MANIFEST).read_text())
    assert sorted(manifest["parameters"]) == sorted(training.trainable) and manifest["fold"] == 1
    assert not any(p.name.startswith(".") for p in folder.parent.iterdir())


def test_a_checkpoint_loads_through_the_loading_path_exactly(trained, tiny_model_dir, tiny_model):
    loaded, _, folder = trained
    reloaded = load_causal_lm(ModelSpec(name="tiny-ft", pretrained=str(tiny_model_dir),
                                        checkpoint=str(folder)))
    ids = tiny_model.tokenizer("There are now rumblings that Apple", return_tensors="pt").input_ids
    with torch.no_grad():
        expected, got = loaded.model(ids).logits, reloaded.model(ids).logits
        base = tiny_model.model(ids).logits
    assert torch.equal(got, expected)
    assert not torch.equal(got, base)


def copy_checkpoint(folder, tmp_path):
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in (MANIFEST, WEIGHTS):
        (copy / name).write_bytes((folder / name).read_bytes())
    return copy


def test_a_corrupt_weights_file_is_named(trained, tiny_model_dir, tmp_path):
    copy = copy_checkpoint(trained[2], tmp_path)
    data = bytearray((copy / WEIGHTS).read_bytes())
    data[-1] ^= 0xFF
    (copy / WEIGHTS).write_bytes(bytes(data))
    with pytest.raises(ValueError, match=f"checkpoint {copy}.*SHA-256"):
        apply_checkpoint(fresh(tiny_model_dir).model, copy)
    (copy / WEIGHTS).write_bytes(bytes(data[:100]))
    manifest = json.loads((copy / MANIFEST).read_text())
    manifest["sha256"] = hashlib.sha256(bytes(data[:100])).hexdigest()
    (copy / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match="unreadable"):
        apply_checkpoint(fresh(tiny_model_dir).model, copy)


def test_a_checkpoint_of_another_architecture_names_the_parameter(trained, tmp_path):
    from transformers import GPT2Config, GPT2LMHeadModel

    folder = trained[2]
    narrow = GPT2LMHeadModel(GPT2Config(vocab_size=50257, n_layer=2, n_head=2, n_embd=16, n_positions=256))
    with pytest.raises(ValueError, match=r"parameter 'transformer\.h\.1\.[\w.]+' has shape"):
        apply_checkpoint(narrow, folder)
    shallow = GPT2LMHeadModel(GPT2Config(vocab_size=50257, n_layer=1, n_head=2, n_embd=32, n_positions=256))
    before = {n: p.clone() for n, p in shallow.named_parameters()}
    with pytest.raises(ValueError, match=r"parameter 'transformer\.h\.1\.[\w.]+' does not exist"):
        apply_checkpoint(shallow, folder)
    assert all(torch.equal(p, before[n]) for n, p in shallow.named_parameters())
    with pytest.raises(FileNotFoundError, match="no manifest.json"):
        apply_checkpoint(shallow, tmp_path)


def test_a_failed_save_leaves_no_checkpoint(trained, tmp_path):
    loaded, training, _ = trained
    folder = tmp_path / "fold-2"
    with pytest.raises(TypeError):
        save_checkpoint(loaded.model, training.trainable, folder, {"not json": object()})
    assert list(tmp_path.iterdir()) == []


# ---- command line ----------------------------------------------------------------------------


def cli(argv: list[str]) -> None:
    """Run a ``varprobe`` subcommand in this process (its errors raise, unlike ``main``)."""
    args = build_parser().parse_args(argv)
    args.run(args)


def test_finetune_provo_then_the_figure(tmp_path, tiny_model_dir, data_mirror):
    model = json.dumps({"name": "tiny", "pretrained": str(tiny_model_dir)})
    norms = data_mirror / "provo_cloze" / "Provo_Corpus-Predictability_Norms.csv"
    settings = json.dumps({"epochs": 2, "batch_size": 2, "warmup_steps": 0})
    for fold, train_passages in ((1, ["3", "4"]), (2, ["1", "2"])):
        cli(["finetune-provo", "--model", model, "--norms", str(norms), "--train-passages",
             *train_passages, "--validation-passages", "41", "--fold", str(fold), "--settings",
             settings, "--gpus", "0", "--checkpoint-out", str(tmp_path / f"ckpt{fold}"),
             "--losses-out", str(tmp_path / f"losses{fold}.parquet")])
    losses = tables.read(tmp_path / "losses1.parquet", "finetune_losses")
    assert list(zip(losses["split"], losses["epoch"])) == [
        ("validation", 0), ("train", 1), ("validation", 1), ("train", 2), ("validation", 2)]
    assert (losses["fold"] == 1).all() and (losses["model"] == "tiny").all()
    metadata = tables.read_metadata(tmp_path / "losses1.parquet")
    assert metadata["data"]["train_passages"] == [3, 4] and metadata["settings"]["epochs"] == 2
    manifest = json.loads((tmp_path / "ckpt1" / MANIFEST).read_text())
    assert manifest["base"]["pretrained"] == str(tiny_model_dir) and manifest["data"]["fold"] == 1

    cli(["finetune-figure", "--losses", str(tmp_path / "losses1.parquet"),
         str(tmp_path / "losses2.parquet"), "--figure", str(tmp_path / "fig.png"),
         "--table", str(tmp_path / "fig.parquet")])
    assert (tmp_path / "fig.png").stat().st_size > 0
    drawn = tables.read(tmp_path / "fig.parquet", "finetune_losses")
    both = pd.concat([losses, tables.read(tmp_path / "losses2.parquet", "finetune_losses")])
    key = ["fold", "split", "epoch"]
    pd.testing.assert_frame_equal(drawn.sort_values(key, ignore_index=True),
                                  both.sort_values(key, ignore_index=True))
    with pytest.raises(ValueError, match="repeat model 'tiny' fold 1"):
        cli(["finetune-figure", "--losses", str(tmp_path / "losses1.parquet"),
             str(tmp_path / "losses1.parquet"), "--figure", str(tmp_path / "again.png"),
             "--table", str(tmp_path / "again.parquet")])


def test_finetune_provo_refuses_overlapping_passages(tmp_path, tiny_model_dir, data_mirror):
    norms = data_mirror / "provo_cloze" / "Provo_Corpus-Predictability_Norms.csv"
    with pytest.raises(ValueError, match=r"passages \[41\]"):
        cli(["finetune-provo", "--model", json.dumps({"name": "tiny", "pretrained": str(tiny_model_dir)}),
             "--norms", str(norms), "--train-passages", "1", "41", "--validation-passages", "41",
             "--fold", "1", "--settings", "{}", "--gpus", "0", "--checkpoint-out",
             str(tmp_path / "c"), "--losses-out", str(tmp_path / "l.parquet")])


def test_finetune_production_on_a_seq2seq_model(tmp_path, tiny_seq2seq_dirs):
    instances = pd.DataFrame({
        "dataset": "toy", "split": "test", "input_id": ["0", "1"],
        "source": ["the cat sat", "the dog ran"],
        "references": [["die Katze saß", "die Katze saß auf der Matte"], ["der Hund lief"]],
    })
    tables.write(instances, tmp_path / "instances.parquet", "production_instances")
    model = {"name": "t5", "pretrained": str(tiny_seq2seq_dirs["t5"])}
    cli(["finetune-production", "--model", json.dumps(model), "--instances",
         str(tmp_path / "instances.parquet"), "--prompt", "{source}", "--settings",
         json.dumps({**FAST, "epochs": 1}), "--gpus", "0", "--name", "t5-ft",
         "--checkpoint-out", str(tmp_path / "ckpt"), "--losses-out", str(tmp_path / "losses.parquet")])
    losses = tables.read(tmp_path / "losses.parquet", "finetune_losses")
    assert list(losses["split"]) == ["train"] and losses["fold"].isna().all()
    assert losses["examples"].tolist() == [3] and (losses["model"] == "t5-ft").all()
    # No validation split: the one epoch is kept; the default trains the norms only.
    assert losses["kept"].tolist() == [True] and (losses["trainable_parts"] == "norms").all()
    tuned = load_generator(ModelSpec(checkpoint=str(tmp_path / "ckpt"), **model))
    base = load_generator(ModelSpec(**model))
    assert not torch.equal(tuned.model.decoder.final_layer_norm.weight, base.model.decoder.final_layer_norm.weight)
    assert torch.equal(tuned.model.decoder.block[1].layer[0].SelfAttention.q.weight,
                       base.model.decoder.block[1].layer[0].SelfAttention.q.weight)


def test_loss_curves_fold_four_panels_into_rows_of_three_with_one_legend():
    from varprobe.plots.finetune import loss_curves

    losses = pd.DataFrame([{"model": "ft", "fold": fold, "split": split, "epoch": epoch, "loss": 3.0 - 0.1 * epoch,
                            "tokens": 10, "examples": 2, "kept": epoch == 1, "trainable_parts": "norms"}
                           for fold in (1, 2, 3, 4) for split in ("train", "validation") for epoch in (1, 2)])
    fig, table = loss_curves(losses)
    rows = {round(ax.get_position().y0, 2) for ax in fig.axes}
    assert len(fig.axes) == 4 and len(rows) == 2 and len(fig.legends) == 1
    assert all(ax.get_legend() is None for ax in fig.axes) and len(table) == len(losses)
    assert all(ax.get_title().endswith("(trains norms)") for ax in fig.axes)
    # One star per panel, on the kept epoch's validation loss.
    stars = [ax.collections[0].get_offsets().tolist() for ax in fig.axes]
    assert stars == [[[1.0, 2.9]]] * 4


# ---- the kept epoch --------------------------------------------------------------------------


def periodic_examples(rng, n: int, step: int) -> list:
    """Sequences of ids 1..39 advancing by ``step``: a pattern a random GPT-2 learns quickly."""
    from varprobe.finetune.examples import Example

    examples = []
    for _ in range(n):
        start = int(rng.integers(1, 40))
        ids = tuple((start + step * t) % 39 + 1 for t in range(12))
        examples.append(Example(ids, ids))
    return examples


def test_the_epoch_of_lowest_validation_loss_is_the_one_the_model_ends_with():
    import dataclasses

    import numpy as np

    from varprobe.finetune.training import _evaluate

    rng = np.random.default_rng(0)
    train_examples = periodic_examples(rng, 8, 3)
    # Validation sequences of another step: at this high learning rate the first epoch helps
    # them and the later ones, fitting the training step, hurt (the loss rises after epoch 1).
    validation_examples = periodic_examples(rng, 4, 7)
    settings = FinetuneSettings(epochs=6, batch_size=2, warmup_steps=0, learning_rate=0.2,
                                trainable_parts="blocks")
    best_model, last_model = three_block_models()[0], three_block_models()[0]
    best = train(best_model, train_examples, validation_examples, settings, pad_id=0)
    last = train(last_model, train_examples, validation_examples,
                 dataclasses.replace(settings, keep_epoch="last"), pad_id=0)
    assert best.losses == last.losses  # the same run; only the weights it ends with differ
    validation = [x.loss for x in best.losses if x.split == "validation"]
    lowest = 1 + int(np.argmin(validation[1:]))
    assert best.kept_epoch == lowest and lowest < settings.epochs, validation
    assert last.kept_epoch == settings.epochs
    assert _evaluate(best_model, validation_examples, 0, 2, 0, False).loss == validation[lowest]
    assert _evaluate(last_model, validation_examples, 0, 2, 0, False).loss == validation[-1]
    weights = dict(last_model.named_parameters())
    assert any(not torch.equal(p, weights[n]) for n, p in best_model.named_parameters())


def test_the_checkpoint_written_is_the_kept_epochs(tmp_path, tiny_model_dir, data_mirror):
    from varprobe.finetune.training import _evaluate

    model = json.dumps({"name": "tiny", "pretrained": str(tiny_model_dir)})
    norms = data_mirror / "provo_cloze" / "Provo_Corpus-Predictability_Norms.csv"
    settings = {"epochs": 3, "batch_size": 2, "warmup_steps": 0, "learning_rate": 0.2,
                "trainable_parts": "blocks"}
    cli(["finetune-provo", "--model", model, "--norms", str(norms), "--train-passages", "3", "4",
         "--validation-passages", "41", "--fold", "1", "--settings", json.dumps(settings), "--gpus", "0",
         "--checkpoint-out", str(tmp_path / "ckpt"), "--losses-out", str(tmp_path / "losses.parquet")])
    losses = tables.read(tmp_path / "losses.parquet", "finetune_losses")
    validation = losses[losses["split"] == "validation"].set_index("epoch")["loss"]
    lowest = int(validation.loc[1:].idxmin())
    assert sorted(losses.loc[losses["kept"], "epoch"].unique()) == [lowest]
    assert (losses["trainable_parts"] == "blocks").all()
    assert json.loads((tmp_path / "ckpt" / MANIFEST).read_text())["kept_epoch"] == lowest
    tuned = load_causal_lm(ModelSpec(name="tiny-ft", pretrained=str(tiny_model_dir),
                                     checkpoint=str(tmp_path / "ckpt")))
    text = passages_table(_norms(norms), [41])["text"]
    examples = text_examples(tuned.tokenizer, list(text), length_limit(tuned.model, 512))
    loss = _evaluate(tuned.model, examples, 0, 2, 50256, False).loss
    assert loss == pytest.approx(validation[lowest], rel=1e-9)


def _norms(path):
    from pathlib import Path

    from varprobe.data.provo import read_norms

    return read_norms(Path(path))
