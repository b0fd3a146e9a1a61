"""Reading and writing files: atomic writes, vector JSON Lines, YAML."""
