"""Reading the config files (``varprobe.config_loading``): the schema's one-line errors, a key
given twice, the base config among the files read, their precedence, and the credential check
before any message could quote the value."""

from __future__ import annotations

import pytest

from test_config_checks import SCHEMA, SCHEMA_PATH
from varprobe.config_checks import ConfigError
from varprobe.config_loading import (
    base_config_problem,
    duplicate_keys,
    in_precedence,
    schema_errors,
    validate_config,
)


def test_schema_errors_are_one_line_each_with_path_value_and_what_is_allowed():
    config = {
        "modles": [],
        "models": [{"name": "a", "pretrained": "x", "package": "y"}, {"name": "b"}],
        "provo": {"n_samples": "forty", "decodings": [{"name": "given"}]},
        "production": {"datasets": [{"name": "foo", "prompt": "p"}]},
    }
    assert schema_errors(config, SCHEMA) == [
        "(top level): Additional properties are not allowed ('modles' was unexpected); known "
        "keys: analyses, api_cache, cpu_fallback, data_mirror, data_verify, models, production, provo, "
        "resources, seed",
        "models[0]: value {'name': 'a', 'pretrained': 'x', 'package': 'y'}: give exactly one "
        "of pretrained, package, parts, samples, published, api, finetune (got pretrained, package)",
        "models[1]: value {'name': 'b'}: give exactly one of pretrained, package, parts, samples, "
        "published, api, finetune (got none)",
        "provo.decodings[0].name: value 'given': not allowed: 'given'",
        "provo.n_samples: value 'forty': it is not of type 'integer'",
    ]  # the dataset 'foo' is not the schema's to refuse: dataset_problems names it


def test_a_long_bad_value_is_shortened():
    [line] = schema_errors({"models": [{"name": "m", "samples": "s.csv", "device": "x" * 500}]}, SCHEMA)
    assert line.startswith("models[0].device: value 'xxx") and len(line) < 200


def test_a_key_given_twice_in_a_config_file_is_named_with_both_lines(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("models: []\nprovo:\n  texts: [1]\n  n_samples: 4\n  texts: all\n")
    assert duplicate_keys(str(path)) == [
        f"{path}, lines 3 and 5: key 'texts' is given twice in one mapping (only the last would "
        "count); keep one"
    ]
    path.write_text("models: []\nprovo: {texts: [1]}\nanalyses: {texts: [1]}\n")
    assert duplicate_keys(str(path)) == []


def test_the_base_config_must_be_among_the_files_read(tmp_path):
    overlay = tmp_path / "configs/paper-scale.yaml"
    assert base_config_problem(["config.yaml", overlay], tmp_path) is None
    assert base_config_problem([tmp_path / "elsewhere/config.yaml", overlay], tmp_path) is None
    problem = base_config_problem([overlay], tmp_path / "run")
    assert problem.startswith(f"config.yaml was not read: it is not in the working directory {tmp_path / 'run'}")
    assert problem.endswith(f"or give it first: --configfile /path/to/config.yaml {overlay}")


def test_config_files_are_put_in_the_order_they_apply(tmp_path):
    """Snakemake lists the command line's config files first but applies them over the
    Snakefile's: the page merges them base first, then the overlays in their given order."""
    base, first, second = (tmp_path / n for n in ("config.yaml", "a.yaml", "b.yaml"))
    read = [str(first), str(second), "config.yaml"]
    assert in_precedence(read, [first, second]) == ["config.yaml", str(first), str(second)]
    assert in_precedence([str(base), str(first)], [base, first]) == [str(base), str(first)]


def test_validate_config_refuses_a_credential_before_any_message_could_repeat_it(tmp_path):
    """The credential check comes before the schema's, whose messages quote bad values."""
    (tmp_path / "config.yaml").write_text("models: []\n")
    url = "http://user:s3cret-value@host/v1"
    config = {"models": [{"name": "chat", "api": {"base_url": url, "model": 5}}], "seed": "zero"}
    with pytest.raises(ConfigError) as refused:
        validate_config(config, str(SCHEMA_PATH), [str(tmp_path / "config.yaml")])
    assert str(refused.value).startswith("the config is invalid:\n  models[0].api.base_url: model 'chat': ")
    assert "s3cret-value" not in str(refused.value) and "seed" not in str(refused.value)
