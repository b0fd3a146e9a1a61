"""The typed, validated model of spec/ and its loading."""
