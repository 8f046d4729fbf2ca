"""Drawing from models: decoding algorithms and the complete-word sampler."""
