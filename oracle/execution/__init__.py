"""The one executor: legality, then the interpreter and the semantics."""
