"""The theorems about the spec, one module per kind; ``sm5.oracle.proofs`` runs them all."""
