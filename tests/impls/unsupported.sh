#!/bin/sh
# The smallest JSON Lines implementation, in POSIX shell: it answers "unsupported" to every
# request (the request's first field is its id).
while IFS= read -r line; do
    id=$(printf '%s\n' "$line" | sed -n 's/^{"id":"\([^"]*\)".*/\1/p')
    printf '{"id":"%s","unsupported":"a shell script executes nothing"}\n' "$id"
done
