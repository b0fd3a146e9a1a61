"""The executable specification: spec loading, the rule language, asm, legality and execution."""
