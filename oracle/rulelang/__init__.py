"""The rule language: parsing, types, helpers, evaluation and compilation."""
