"""Few-shot prompts: the examples drawn, the template they make, and production-sample using it."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from varprobe import cli, tables
from varprobe.data.few_shot import choose_examples, few_shot_template
from varprobe.sampling.generate import render_prompt


def _table(n: int, split: str = "dev") -> pd.DataFrame:
    return pd.DataFrame({"dataset": "d", "split": split, "input_id": [f"i{j}" for j in range(n)],
                         "source": [f"source {j}" for j in range(n)],
                         "references": [[f"answer {j}", f"other {j}"] for j in range(n)]})


def test_the_choice_is_seeded_in_table_order_and_never_an_evaluated_input():
    table = _table(20)
    one, again = choose_examples(table, 3, seed=7), choose_examples(table, 3, seed=7)
    assert list(one["input_id"]) == list(again["input_id"])
    assert list(one.index) == sorted(one.index) and len(set(one["input_id"])) == 3
    assert any(list(choose_examples(table, 3, seed=s)["input_id"]) != list(one["input_id"]) for s in range(5))
    evaluated = {f"source {j}" for j in range(18)}
    assert set(choose_examples(table, 2, seed=0, exclude_sources=evaluated)["input_id"]) == {"i18", "i19"}


@pytest.mark.parametrize(("k", "match"), [(0, "at least 1"), (4, r"split \(dev\) has only 3")])
def test_an_impossible_choice_names_what_is_missing(k, match):
    with pytest.raises(ValueError, match=match):
        choose_examples(_table(3), k, seed=0)


def test_the_few_shot_template_solves_each_example_then_asks_for_the_input():
    examples = _table(2).assign(source=["a {x}", "b"])
    template = few_shot_template("Q: {source}\nA:", examples)
    assert render_prompt(template, "c") == "Q: a {x}\nA:\nanswer 0\n\nQ: b\nA:\nanswer 1\n\nQ: c\nA:"


def test_production_sample_prompts_with_the_examples_and_records_them(tmp_path, tiny_model_dir):
    instances, examples = tmp_path / "instances.parquet", tmp_path / "examples.parquet"
    tables.write(_table(2, "test"), instances, "production_instances")
    # the examples split holds one evaluated input: it is never drawn
    tables.write(pd.concat([_table(2, "test"), _table(6, "test").iloc[2:]]), examples, "production_instances")
    out = tmp_path / "samples.parquet"
    cli.main(["production-sample", "--model", json.dumps({"name": "tiny", "pretrained": str(tiny_model_dir)}),
              "--decoding", '{"name": "ancestral"}', "--instances", str(instances),
              "--prompt", "Say: {source}", "--few-shot", "2", "--examples", str(examples), "--no-chat",
              "--n-samples", "2", "--max-new-tokens", "3", "--seed", "0", "--gpus", "0", "--out", str(out)])
    meta = tables.read_metadata(out)
    drawn = meta["few_shot"]
    assert drawn["k"] == 2 and drawn["split"] == "test" and drawn["template"] == "Say: {source}"
    assert set(drawn["input_ids"]) <= {"i2", "i3", "i4", "i5"} and len(drawn["input_ids"]) == 2
    assert meta["prompt"].endswith("\n\nSay: {source}") and meta["prompt"].count("Say: ") == 3
    assert len(tables.read(out, "production_samples")) == 2 * 2


def test_few_shot_without_examples_is_an_error_naming_the_option(tmp_path, capsys):
    instances = tmp_path / "instances.parquet"
    tables.write(_table(2), instances, "production_instances")
    with pytest.raises(SystemExit):
        cli.main(["production-sample", "--model", '{"name": "tiny", "pretrained": "x"}',
                  "--decoding", '{"name": "ancestral"}', "--instances", str(instances),
                  "--prompt", "{source}", "--few-shot", "1", "--n-samples", "2", "--max-new-tokens", "1",
                  "--seed", "0", "--gpus", "0", "--out", str(tmp_path / "o.parquet")])
    assert "--few-shot needs --examples" in capsys.readouterr().err
