"""varprobe: does a language model reproduce the variability of human language production?

``varprobe.evaluate(model, tokenizer)`` runs the next-word study of one model on a slice of the
Provo Corpus without Snakemake (``varprobe.evaluation``); it is imported on first use, so that
``import varprobe`` stays light.
"""

__all__ = ["evaluate"]


def __getattr__(name: str):
    if name == "evaluate":
        from varprobe.evaluation import evaluate

        return evaluate
    raise AttributeError(f"module 'varprobe' has no attribute {name!r}")
