"""The generation engine: n full productions per input, many inputs batched together.

* **Each prompt is encoded once.** A causal LM runs an input's prompt through the network
  once and copies its keys/values into the cache rows of its n samples; a seq2seq model runs
  its encoder once per input and its n samples attend to that one encoding. The tokens every
  prompt of a job starts with (the chat template and the instruction before the input:
  ``prefix``, given by the caller, not read off the job's inputs) are encoded once per job, and
  each prompt that starts with them runs only its own tokens on top of their keys/values. On
  CPU, where a row's bits do not depend on its company, the next inputs' prompts run together
  in one forward, each attending on its own (``prompts.py``): the same bits as alone, the
  weights read once for all of them.
* **Inputs start in order of prompt length** (shortest first, ties in the order given), so the
  rows in flight have prompts of similar lengths and a pass, which attends over its longest
  row's columns, runs few masked ones; ``run`` yields each input's samples when its last one
  ends.
* **Rows from several inputs share every forward pass**, ``batch_size`` rows in flight. For a
  causal LM a row leaves as soon as it ends (end of sequence or ``max_new_tokens``) and the
  next waiting sample takes its cache row (continuous batching). Each cache row holds one
  sample at its own length: row r's tokens sit at columns ``[0, n_r)`` and its next token is
  written at column ``n_r`` with position ``n_r``, the columns after it masked. The rows in
  flight are kept at the front of their lane (a row that ends is replaced by the lane's last
  one), so a pass runs only them, padded up to a multiple of its pass rows. A seq2seq decoder
  takes its positions from the cache length (Marian's absolute positions, T5's relative ones),
  so its rows advance in step: a group of up to ``batch_size`` samples (one lane) starts
  together and ends when its last sample does.
* **Each sample draws from its own stream.** Sample j of the input with id ``key`` draws its
  t-th token by inverse-CDF sampling with the uniform ``U[j, t]`` of its own stream (child j of
  ``SeedSequence([seed, key])``) from the decoding's weights (``Decoding.weights`` and
  ``draw`` in ``decoding.py``).
* **The productions do not depend on the batching.** A row's arithmetic must not depend on the
  other rows of its pass. The rows of a pass attend over the same columns: on CPU the first
  ``span`` of the cache, the longest row in flight plus one column, rounded up to ``SPAN_STEP``,
  at most the capacity, itself a multiple of ``SPAN_STEP`` (columns past a row's own are
  masked, and a masked column adds an exact zero to its softmax and its sum of values, so a
  row's bits do not depend on the span: ``tests/test_generate.py`` checks this on the machine
  that runs it). Every pass masks a column of every row: given a
  mask that masks nothing, transformers drops it and SDPA runs its unmasked path, whose bits
  differ (on AVX2 CPUs, SmolLM2's); on other devices, whose attention kernels may split the columns
  by their count, every column of the job's capacity (its longest prompt rounded up to
  ``CAPACITY_STEP`` tokens plus the token budget; for seq2seq the longest source, likewise
  rounded, and the steps so far). Every pass has a row count the
  device's matrix products treat alike: on CPU any multiple of ``PASS_ROWS["cpu"]`` (the
  oneDNN/MKL kernels give a row the same bits at 16, 32, 48, ... rows, but not at every count
  below 12; ``tests/test_generate.py`` checks this on the machine that runs it), or of
  ``PACKED_PASS_ROWS`` when every product runs packed (a packed product gives a row the same
  bits in any pass of two rows or more: ``tests/test_packing.py``), on CUDA
  exactly ``PASS_ROWS["cuda"]`` (a lane of its own per pass, since cuBLAS picks its kernels
  by shape). So a sample is the same to the bit whatever ``batch_size`` is, whichever inputs
  share its pass and in whatever order the inputs come. On CPU the capacity enters no bits,
  so every sharding of a dataset's inputs gives the same productions; on other devices jobs
  whose longest prompts round to the same capacity (all of them, for prompts under
  ``CAPACITY_STEP`` tokens) do, and so does a job that resumes the inputs it had not
  finished, given the capacity of all its inputs (``run``'s ``capacity``).

Memory is bounded by ``batch_size`` rows of the capacity, not by the number of inputs.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from transformers.cache_utils import Cache, CacheLayerMixin
from transformers.modeling_outputs import BaseModelOutput
from transformers.pytorch_utils import Conv1D

from varprobe.models.packing import PackedLinear, multiplies_packed
from varprobe.models.window import model_name
from varprobe.sampling.decoding import Decoding, UnusableWeights, draw
from varprobe.sampling.prompts import PromptEncoder

PASS_ROWS = {"cpu": 16, "cuda": 128}
"""Every decoding pass has a multiple of this many rows, per device type (other devices: the
CUDA count), unless the model multiplies packed (``PACKED_PASS_ROWS``). On CPU one lane holds
all ``batch_size`` rows (rounded up to a multiple); other devices have lanes of exactly this
many rows, one pass each."""
PACKED_PASS_ROWS = 2
"""The multiple of a CPU pass's rows when every product of the model runs packed
(``varprobe.models.packing.multiplies_packed``): a packed product gives a row the same bits in
any pass of two rows or more, so a pass is padded by at most one row."""
CAPACITY_STEP = 64
"""Prompt (and source) lengths are rounded up to a multiple of this many tokens."""
SPAN_STEP = {"cpu": 16}
"""Per device type: the columns a causal pass attends over are its longest row rounded up to a
multiple of this many (other devices: the lane's whole capacity in every pass). On CPU a
multiple of the widest float32 vector (16 lanes with AVX-512): the attention kernel sums a
row's softmax over whole vectors of columns and adds the columns past the last whole vector one
by one, so with a span that is not such a multiple a row's last columns are summed in another
order in another batching (``tests/test_generate.py``). A CPU lane's capacity is rounded up to
a multiple too: the passes of a job's longest rows reach it, and a span of 178 columns gives
SmolLM2 on AVX2 other bits than one of 80 for a row of 56, from its first token."""


@dataclass
class _Input:
    """One input: its id and token ids, its samples' uniforms ``(n, max_new_tokens)``, and while its
    samples are being placed, its encoding (prompt keys/values or encoder states) and each
    sample's first token (causal LMs)."""

    key: str
    ids: list[int]
    uniforms: np.ndarray
    encoding: object = None
    first: list[int] | None = None
    outputs: dict[int, list[int]] = field(default_factory=dict)


@dataclass
class _Row:
    """A sample in flight: its input, its index and the tokens it generated so far."""

    source: _Input
    sample: int
    tokens: list[int] = field(default_factory=list)


def sample_uniforms(seed: int, key: str, n_samples: int, max_new_tokens: int) -> np.ndarray:
    """The uniforms of the input with id ``key``: row j is the start of sample j's own stream
    (child j of ``SeedSequence([seed, len(key), *utf8(key)])``), so a sample does not change
    when ``n_samples`` or ``max_new_tokens`` change.

    Parameters
    ----------
    seed : int
        The run's seed.
    key : str
        The input's id.
    n_samples : int
        Samples of the input.
    max_new_tokens : int
        The most tokens a sample generates.

    Returns
    -------
    numpy.ndarray
        Uniforms in [0, 1), shape ``(n_samples, max_new_tokens)``.
    """
    raw = key.encode()
    children = np.random.SeedSequence([seed, len(raw), *raw]).spawn(n_samples)
    return np.stack([np.random.default_rng(c).random(max_new_tokens) for c in children])


@dataclass
class _Pass:
    """What the next pass of a lane runs: its first ``width`` cache rows over their first
    ``span`` columns; row r's new token goes to column ``lengths[r]`` (``writes``: for each row
    and head in order, the index of that column in a layer's keys viewed as one vector per
    column). The lane and each of its layers hold it (the layers do not hold the lane: no
    reference cycle keeps a finished job's cache alive until the garbage collector runs)."""

    lengths: torch.Tensor
    width: int = 0
    span: int = 0
    writes: torch.Tensor | None = None


class _RowLayer(CacheLayerMixin):
    """One layer's keys and values of a lane, ``(rows, heads, capacity, head_dim)``, of which a
    pass runs the rows and columns of ``step`` (a ``_Pass``), writing each row's new token in
    place (no copy of the cache)."""

    is_sliding = False

    def __init__(self, step: _Pass, keys: torch.Tensor, values: torch.Tensor) -> None:
        super().__init__()
        self.step, self.keys, self.values = step, keys, values
        self.is_initialized = True

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        raise AssertionError("allocated at construction")

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        width, span, dim = self.step.width, self.step.span, self.keys.shape[-1]
        for cache, states in ((self.keys, key_states), (self.values, value_states)):
            cache.view(-1, dim).index_copy_(0, self.step.writes, states.reshape(-1, dim))
        return self.keys[:width, :, :span], self.values[:width, :, :span]

    def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
        return self.step.span, 0

    def get_seq_length(self) -> int:
        # The query sits at the last column for the causal mask: every column is allowed, the
        # padding mask tells each row its own.
        return self.step.span - 1

    def get_max_length(self) -> int:
        return self.keys.shape[2]


class _Lane:
    """``size`` cache rows of a causal LM. The rows in flight are ``slots[:n]``; a pass runs
    the first ``width`` rows: ``n`` rounded up to a multiple of ``step``, over the first
    ``span`` columns: the longest of them (its next token's column included) plus one, rounded
    up to a multiple of ``span_step`` (the capacity too is one), or every column when
    ``span_step`` is None (the capacity holds a column past the last one a pass writes). All
    layers' keys (values) are one tensor ``(layers, rows, heads, capacity, head_dim)``, so a row is placed or
    moved by one copy of its keys and one of its values."""

    def __init__(self, model, size: int, step: int, capacity: int, device: torch.device,
                 span_step: int | None = None) -> None:
        config = model.config.get_text_config()
        heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
        head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        dtype = next(model.parameters()).dtype
        self.size, self.step, self.span_step = size, step, span_step
        self.lengths = torch.zeros(size, dtype=torch.long, device=device)
        self.next = _Pass(self.lengths)
        shape = (config.num_hidden_layers, size, heads, capacity, head_dim)
        self.keys = torch.zeros(shape, dtype=dtype, device=device)
        self.values = torch.zeros(shape, dtype=dtype, device=device)
        self.layers = [_RowLayer(self.next, keys, values) for keys, values in zip(self.keys, self.values, strict=True)]
        self.cache = Cache(layers=self.layers)
        self.slots: list[_Row] = []
        self.columns = torch.arange(capacity, device=device)
        # Where row r's head h starts in a layer's keys viewed as one vector per column.
        row_heads = heads * torch.arange(size, device=device)[:, None] + torch.arange(heads, device=device)
        self.starts = capacity * row_heads

    @property
    def width(self) -> int:
        return min(self.size, _round_up(len(self.slots), self.step))

    def free(self) -> int:
        return self.size - len(self.slots)

    def prepare(self) -> _Pass:
        """Size the next pass of the rows in flight: ``width`` rows over ``span`` columns, each
        row's new token written at its length."""
        width = self.next.width = self.width
        self.next.span = len(self.columns)
        if self.span_step is not None:
            # One column past the longest row's new one, so no pass's mask is all true.
            longest = int(self.lengths[: len(self.slots)].max()) + 1
            self.next.span = min(self.next.span, _round_up(longest + 1, self.span_step))
        self.next.writes = (self.starts[:width] + self.lengths[:width, None]).view(-1)
        return self.next

    def place(self, row: _Row, prompt: tuple[torch.Tensor, torch.Tensor]) -> None:
        """Put ``row`` in the next free slot with its input's prompt keys and values
        (layers x heads x p x dim each)."""
        slot, (keys, values) = len(self.slots), prompt
        self.keys[:, slot, :, : keys.shape[2]] = keys
        self.values[:, slot, :, : values.shape[2]] = values
        self.lengths[slot] = keys.shape[2]
        self.slots.append(row)

    def remove(self, slot: int) -> None:
        """Take out the row in ``slot``; the lane's last row moves into it."""
        last = len(self.slots) - 1
        if slot != last:
            self.take(slot, self, last)
        self.slots.pop()
        self.lengths[last] = 0

    def take(self, slot: int, other: _Lane, other_slot: int) -> None:
        """Copy the row of ``other``'s ``other_slot`` (its length, and the keys and values of its
        columns so far: the rest are masked until written) into ``slot``."""
        length = int(other.lengths[other_slot])
        self.keys[:, slot, :, :length] = other.keys[:, other_slot, :, :length]
        self.values[:, slot, :, :length] = other.values[:, other_slot, :, :length]
        self.lengths[slot] = length
        self.slots[slot] = other.slots[other_slot]


class Engine:
    """Full productions of a causal LM or a seq2seq model under a decoding (module docstring).

    Parameters
    ----------
    model : torch.nn.Module
        The loaded causal LM or seq2seq model.
    decoding : Decoding
        The decoding that turns each step's logits into weights.
    eos : sequence of int
        The end-of-sequence ids: a sample ends at the first one (not included in it).
    pad : int
        The token id fed to the padding rows of a pass.
    n_samples : int
        Productions per input.
    max_new_tokens : int
        The most tokens a production has.
    seed : int
        The run's seed (``sample_uniforms``).
    batch_size : int
        Rows decoded together, >= 1 (rounded up to a multiple of ``pass_rows``).
    prefix : sequence of int
        The token ids every prompt of the job starts with (the chat template and the
        instruction before the input), encoded once per job.

    Raises
    ------
    ValueError
        When ``batch_size < 1``.
    """

    def __init__(self, model, decoding: Decoding, *, eos: Sequence[int], pad: int, n_samples: int,
                 max_new_tokens: int, seed: int, batch_size: int, prefix: Sequence[int] = ()) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model, self.decoding = model, decoding
        self.eos, self.pad = set(eos), pad
        self.n_samples, self.max_new_tokens, self.seed = n_samples, max_new_tokens, seed
        self.device = next(model.parameters()).device
        self.pass_rows = pass_rows(model, self.device)
        if self.device.type == "cpu":
            check_row_invariance(model, self.pass_rows)
        rows = _round_up(batch_size, self.pass_rows)
        self.lane_rows = rows if self.device.type == "cpu" else self.pass_rows
        self.lanes = math.ceil(rows / self.lane_rows)
        self.seq2seq = bool(getattr(model.config, "is_encoder_decoder", False))
        self.prompts = PromptEncoder(model, prefix)

    def run(self, work: Sequence[tuple[str, list[int]]],
            capacity: int | None = None) -> Iterator[tuple[str, list[list[int]]]]:
        """Each input's productions, in the order the inputs finish; they start in order of prompt
        length (module docstring).

        Parameters
        ----------
        work : sequence of (str, list of int)
            ``(input_id, prompt token ids)`` of each input.
        capacity : int, optional
            The prompt (source) columns of the cache, ``prompt_capacity`` of ``work`` by default; a
            job that resumes some of its inputs passes the capacity of all of them, so that their
            samples keep their bits.

        Yields
        ------
        tuple of (str, list of list of int)
            ``(input_id, its n_samples generated token lists)``, end of sequence excluded.

        Raises
        ------
        ValueError
            When ``capacity`` is below ``prompt_capacity`` of ``work``.
        """
        inputs = [_Input(key, ids, sample_uniforms(self.seed, key, self.n_samples, self.max_new_tokens))
                  for key, ids in sorted(work, key=lambda item: len(item[1]))]
        if not inputs:
            return
        least = prompt_capacity(x.ids for x in inputs)
        capacity = least if capacity is None else capacity
        if capacity < least:
            raise ValueError(f"capacity {capacity} is below the longest prompt's {least}")
        finished = self._seq2seq(inputs, capacity) if self.seq2seq else self._causal(inputs, capacity)
        for source in finished:
            yield source.key, [source.outputs[j] for j in range(self.n_samples)]

    def _queue(self, inputs: list[_Input]) -> deque[_Row]:
        return deque(_Row(x, j) for x in inputs for j in range(self.n_samples))

    def _finish(self, row: _Row) -> _Input | None:
        """Record ``row``'s production; its input when that was the input's last one."""
        tokens = row.tokens[:-1] if row.tokens and row.tokens[-1] in self.eos else row.tokens
        row.source.outputs[row.sample] = tokens
        if len(row.source.outputs) == self.n_samples:
            row.source.encoding = row.source.first = None
            return row.source
        return None

    def _ended(self, row: _Row) -> bool:
        return row.tokens[-1] in self.eos or len(row.tokens) == self.max_new_tokens

    def _draw(self, weights: torch.Tensor, rows: Sequence[_Row]) -> None:
        """Append to each sample of ``rows`` the token its uniform picks from its row of the
        decoding's ``weights`` (one row per sample, in order: ``decoding.draw``)."""
        u = torch.tensor([row.source.uniforms[row.sample, len(row.tokens)] for row in rows],
                         dtype=torch.float64, device=weights.device)
        for row, token in zip(rows, _draw_for(weights, u, [row.source.key for row in rows]), strict=True):
            row.tokens.append(token)

    # Causal LMs: continuous batching over cache rows of their own lengths.

    @torch.inference_mode()
    def _causal(self, inputs: list[_Input], prompt_columns: int) -> Iterator[_Input]:
        span_step = SPAN_STEP.get(self.device.type)
        # On CPU the capacity too is a multiple of the span step: the passes that reach it span it.
        capacity = _round_up(prompt_columns + self.max_new_tokens, span_step or 1)
        lanes = [_Lane(self.model, self.lane_rows, self.pass_rows, capacity, self.device, span_step)
                 for _ in range(self.lanes)]
        waiting, unencoded = self._queue(inputs), deque(inputs)
        while True:
            for lane in lanes:
                while waiting and lane.free():
                    finished = self._start(lane, waiting.popleft(), unencoded)
                    if finished:
                        yield finished
            if not waiting:
                lanes = _compact(lanes)
            active = [lane for lane in lanes if lane.slots]
            if not active:
                return
            for lane in active:
                yield from self._step(lane)

    def _start(self, lane: _Lane, row: _Row, unencoded: deque[_Input]) -> _Input | None:
        """Place ``row`` in ``lane`` unless its first token ended it already (then its input if
        that one is done). Its input's prompt is encoded first if it is that input's first
        sample, with the next ones of ``unencoded`` where prompts run several per forward
        (``PromptEncoder.take``), and each encoded input's samples draw their first tokens."""
        source = row.source
        if source.encoding is None:
            group = self.prompts.take(unencoded)
            for x, (encoding, logits) in zip(group, self.prompts.encode([x.ids for x in group]), strict=True):
                weights = self.decoding.weights(logits, overwrite=True).expand(self.n_samples, -1)
                x.encoding = encoding
                u = torch.from_numpy(x.uniforms[:, 0]).to(weights.device)
                x.first = _draw_for(weights, u, [x.key] * self.n_samples)
        row.tokens.append(source.first[row.sample])
        if self._ended(row):
            return self._finish(row)
        lane.place(row, source.encoding)
        return None

    def _step(self, lane: _Lane) -> Iterator[_Input]:
        """One pass of the lane's rows in flight: each one's newest token; rows that end leave."""
        step, rows = lane.prepare(), list(enumerate(lane.slots))
        ids = [[row.tokens[-1]] for _, row in rows] + [[self.pad]] * (step.width - len(rows))
        lengths = lane.lengths[: step.width]
        mask = lane.columns[: step.span] <= lengths[:, None]
        out = self.model(input_ids=torch.tensor(ids, device=self.device), attention_mask=mask.long(),
                         position_ids=lengths[:, None].clone(), past_key_values=lane.cache, use_cache=True)
        lane.lengths[: len(rows)] += 1
        # Rows 0..n-1 of the pass are the rows in flight, read in place (no copy of their logits).
        self._draw(self.decoding.weights(out.logits[: len(rows), -1], overwrite=True), [row for _, row in rows])
        for slot, row in reversed(rows):
            if self._ended(row):
                lane.remove(slot)
                finished = self._finish(row)
                if finished:
                    yield finished

    # Seq2seq models: groups of samples that advance in step.

    @torch.inference_mode()
    def _seq2seq(self, inputs: list[_Input], source_capacity: int) -> Iterator[_Input]:
        waiting = self._queue(inputs)
        while waiting:
            group = [waiting.popleft() for _ in range(min(self.lane_rows, len(waiting)))]
            yield from self._decode_group(group, source_capacity)

    def _encode(self, source: _Input, capacity: int) -> torch.Tensor:
        """The input's encoder states, zero-padded to ``capacity`` positions (1 x capacity x d)."""
        if source.encoding is None:
            ids = torch.tensor([source.ids], device=self.device)
            states = self.model.get_encoder()(input_ids=ids).last_hidden_state
            source.encoding = torch.nn.functional.pad(states, (0, 0, 0, capacity - states.shape[1]))
        return source.encoding

    def _decode_group(self, group: list[_Row], capacity: int) -> Iterator[_Input]:
        width = _round_up(len(group), self.pass_rows)
        spare = width - len(group)
        states = torch.cat([self._encode(row.source, capacity) for row in group]
                           + [torch.zeros_like(group[0].source.encoding)] * spare)
        lengths = torch.tensor([len(row.source.ids) for row in group] + [1] * spare, device=self.device)
        mask = (torch.arange(capacity, device=self.device) < lengths[:, None]).long()
        start = self.model.config.decoder_start_token_id
        ids = torch.full((width, 1), start, device=self.device)
        cache, open_rows = None, list(enumerate(group))
        while open_rows:
            out = self.model(encoder_outputs=BaseModelOutput(last_hidden_state=states), attention_mask=mask,
                             decoder_input_ids=ids, past_key_values=cache, use_cache=True)
            cache = out.past_key_values
            index = torch.tensor([i for i, _ in open_rows], device=self.device)
            self._draw(self.decoding.weights(out.logits[index, -1], overwrite=True), [row for _, row in open_rows])
            ids = torch.full((width, 1), self.pad, device=self.device)
            still = []
            for index, row in open_rows:
                if self._ended(row):
                    finished = self._finish(row)
                    if finished:
                        yield finished
                else:
                    ids[index, 0] = row.tokens[-1]
                    still.append((index, row))
            open_rows = still


def _draw_for(weights: torch.Tensor, u: torch.Tensor, keys: Sequence[str]) -> list[int]:
    """``draw``'s tokens, of rows whose inputs have the ids ``keys`` (one per row); when some rows'
    weights are unusable (``UnusableWeights``), an error naming their inputs."""
    try:
        return draw(weights, u).tolist()
    except UnusableWeights as error:
        inputs = sorted({keys[r] for r in error.rows})
        raise ValueError(f"input(s) {inputs}: {error}") from error


def pass_rows(model, device: torch.device) -> int:
    """The multiple of every decoding pass's rows for ``model`` on ``device``: ``PACKED_PASS_ROWS``
    on CPU when every product of the model runs packed, else ``PASS_ROWS`` of the device type.

    Parameters
    ----------
    model : torch.nn.Module
        The loaded model.
    device : torch.device
        The device it runs on.

    Returns
    -------
    int
        The row multiple.
    """
    if device.type == "cpu" and multiplies_packed(model):
        return PACKED_PASS_ROWS
    return PASS_ROWS.get(device.type, PASS_ROWS["cuda"])


def check_row_invariance(model, rows: int) -> None:
    """Refuse a model whose products on this CPU give a row other bits in a pass of another
    multiple of ``rows`` rows: the engine's batch invariance rests on it (the module docstring).
    Each distinct shape and dtype of the model's matrix-product modules (``torch.nn.Linear``,
    ``PackedLinear``, GPT-2's ``Conv1D``) is run once on ``8 * rows`` random rows and once on
    each shorter multiple of ``rows``, on the job's threads. One thread's float32 and float64
    products hold (``tests/test_generate.py`` checks the machine); bfloat16 ones do not where
    oneDNN runs them on AMX tiles, nor float32 ones on some CPUs where several threads split a
    product by its row count.

    Parameters
    ----------
    model : torch.nn.Module
        The loaded model, on the CPU.
    rows : int
        The multiple of every pass's rows (``pass_rows``).

    Returns
    -------
    None

    Raises
    ------
    ValueError
        Naming the model, the layer's shape and dtype, and what to do instead.
    """
    seen = set()
    generator = torch.Generator().manual_seed(0)
    for module in model.modules():
        if not isinstance(module, torch.nn.Linear | PackedLinear | Conv1D):
            continue
        weight = module.weight
        inner = weight.shape[0] if isinstance(module, Conv1D) else weight.shape[1]
        if (inner, tuple(weight.shape), weight.dtype) in seen:
            continue
        seen.add((inner, tuple(weight.shape), weight.dtype))
        x = torch.randn(8 * rows, inner, generator=generator).to(weight.dtype)
        with torch.inference_mode():
            full = module(x)
            bits = full.contiguous().view(torch.uint8)   # bits, so that a NaN meets itself
            if not all(torch.equal(module(x[:n]).contiguous().view(torch.uint8), bits[:n])
                       for n in range(rows, 8 * rows, rows)):
                threads = torch.get_num_threads()
                raise ValueError(
                    f"model {model_name(model)!r}: this CPU's {str(weight.dtype).removeprefix('torch.')} products "
                    f"of a {inner}-input layer on {threads} thread{'s' * (threads != 1)} give a row other bits in passes "
                    f"of other multiples of {rows} rows, so its productions would depend on the batch size; run its "
                    "production jobs on one thread (resources: production_sample: cpus_per_task: 1), in float32 "
                    "(dtype: float32)")


def prompt_capacity(prompts: Iterable[Sequence[int]]) -> int:
    """The cache columns a job's prompts (sources) take: the longest rounded up to a multiple
    of ``CAPACITY_STEP``.

    Parameters
    ----------
    prompts : iterable of sequence of int
        The token ids of each prompt (at least one).

    Returns
    -------
    int
        The number of columns.
    """
    return _round_up(max(len(ids) for ids in prompts), CAPACITY_STEP)


def _round_up(n: int, step: int) -> int:
    """``n`` rounded up to a multiple of ``step``."""
    return -(-n // step) * step


def _compact(lanes: list[_Lane]) -> list[_Lane]:
    """Once no sample waits: move the rows of the last lanes into free rows of the first ones
    while that empties a lane, and drop the empty lanes (fewer padded rows per pass)."""
    lanes = [lane for lane in lanes if lane.slots] or lanes[:1]
    while len(lanes) > 1 and sum(lane.free() for lane in lanes[:-1]) >= len(lanes[-1].slots):
        last = lanes.pop()
        for lane in lanes:
            while lane.free() and last.slots:
                lane.slots.append(None)
                lane.take(len(lane.slots) - 1, last, len(last.slots) - 1)
                last.slots.pop()
    return lanes
