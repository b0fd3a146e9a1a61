"""The theorems about the spec, one module per kind; ``oracle.proofs`` runs them all."""
