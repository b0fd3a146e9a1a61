"""Golden vectors: the format, hypothesis strategies derived from the spec, and the generator."""
