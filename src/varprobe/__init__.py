"""varprobe: does a language model reproduce the variability of human language production?"""
