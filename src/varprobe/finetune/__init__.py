"""Fine-tuning the last transformer blocks of a model (Ilia & Aziz 2024, App. F): cross-validation
folds, training examples, the training loop and checkpoints of the trained parameters only."""
