"""The specification as data: instruction YAML, the machine model and the JSON Schemas."""
