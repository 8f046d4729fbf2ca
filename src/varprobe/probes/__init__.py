"""Production probes (Giulianelli et al. 2023, Sec. 3.2): distances between two productions.

Each probe is a pure function of two pre-processed texts (token or tag sequences, embeddings);
the pre-processing (parsing, embedding) runs once per text and is reused across its pairs.
"""
