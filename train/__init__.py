"""Training: ``python -m train PRESET`` (see ``train.presets``)."""
