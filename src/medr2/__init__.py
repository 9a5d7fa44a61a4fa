"""medr2: a hierarchical, adversarial benchmark toolkit for medical vision-language models."""

__version__ = "0.1.0"
